/**
 * The page's browser script, as text (inlined by page.ts; no file, CDN or library is fetched).
 * It reads `/tasks` and `/tasks/:id?events=1` on load and after every SSE `commit` (and, through
 * PAGE_STORY_SCRIPT, the Task's story, its outcome and the inbox), and lists each Context's items and each
 * refusal's causes as the Task view gives them (the same fields `ordivon show --json` prints). No template literals, so it can sit in one.
 */
export const PAGE_SCRIPT = String.raw`
'use strict';
var token = new URLSearchParams(location.search).get('access_token');
var auth = token ? { authorization: 'Bearer ' + token } : {};
var selected = null, tasks = [], cancelNote = '';
var $ = function (id) { return document.getElementById(id); };
function esc(s) { return String(s).replace(/[&<>"']/g, function (c) { return '&#' + c.charCodeAt(0) + ';'; }); }
function get(path) { return fetch(path, { headers: auth }).then(function (r) { return r.json(); }); }

// As queued-text.ts queuedText: where a Task waiting for a run slot stands.
function queuedText(q) {
  return 'queued #' + q.position + ', waiting on ' + (q.limit === 'runs' ? 'concurrency.runs' : 'harnesses.' + q.harness + '.maxRuns') + ' (' + q.max + ')';
}

function renderList() {
  $('tasks').innerHTML = tasks.length ? tasks.map(function (t) {
    return '<li class="' + (t.taskId === selected ? 'sel' : '') + '"><a href="#' + encodeURIComponent(t.taskId) + '">' + esc(t.title || t.taskId) + '</a><br><code>' + esc(t.taskId) + '</code> <span class="badge" data-task-state="' + esc(t.state) + '">' + esc(t.state) + '</span>' + (t.queued ? ' <span class="badge" data-queued="' + t.queued.position + '">queued #' + t.queued.position + '</span>' : '') + ' r' + t.revision + ' g' + t.generation + '</li>';
  }).join('') : '<li>no tasks yet</li>';
}

// As show-text.ts describeAction: the command line, the Effect, or the kind.
function describeAction(a) {
  if (a.kind === 'command') return [a.command].concat(a.args).join(' ');
  if (a.kind === 'effect') return 'effect ' + a.adapter + ': ' + a.operation + ' ' + a.target;
  return a.kind;
}
function digest12(d) { return String(d).indexOf('sha256:') === 0 ? String(d).slice(0, 19) + '…' : String(d); }
function digest16(d) { return String(d).indexOf('sha256:') === 0 ? String(d).slice(7, 23) : String(d); }

// What caused a refusal, in the words ordivon show uses (cli/commands/show-text.ts).
function causeText(k) {
  if (k.kind === 'stale') return 'stale ' + k.sourceId + ': bound ' + digest12(k.bound) + ', now ' + (k.current === null ? 'gone' : digest12(k.current)) + (k.via ? ' (via ' + k.via + ')' : '');
  if (k.kind === 'candidate') return 'candidate "' + k.candidateId + '" is not one of the Context\'s: ' + (k.known.join(', ') || 'none');
  if (k.kind === 'action') return 'candidate ' + k.candidateId + ': job ' + (k.jobId || '-') + ' exited ' + (k.exitCode === null ? '-' : k.exitCode);
  if (k.kind === 'context') return 'named context ' + (digest16(k.named) || '-') + ', current ' + (k.current === null ? 'none' : digest16(k.current)) + (k.decidedAt !== null ? ' (already decided at r' + k.decidedAt + ')' : '');
  if (k.kind === 'frozen') return 'frozen test ' + k.path + ' changed: bound ' + digest12(k.bound) + ', now ' + (k.current === null ? (k.code || 'gone') : digest12(k.current));
  if (k.kind === 'command') return 'acceptance command ' + (k.exitCode === null ? 'did not exit (' + k.jobState + ')' : 'exited ' + k.exitCode) + (k.stderr || k.stdout ? ': ' + (k.stderr || k.stdout).trim().split('\n').slice(-3).join(' / ') : '');
  if (k.kind === 'source') return 'source moved: ' + (k.before ? digest12(k.before) : '-') + ' before the command, ' + (k.after ? digest12(k.after) : '-') + ' after, ' + digest12(k.host) + ' on the Host';
  return k.kind;
}

// One line per cause, a candidate's supporting sources on one line (as ordivon show prints them).
function causeLines(causes) {
  var lines = [], support = {};
  causes.forEach(function (k) {
    if (k.kind !== 'support') return lines.push(causeText(k));
    (support[k.candidateId] = support[k.candidateId] || []).push(k.sourceId + ' (' + k.trust + ')');
  });
  Object.keys(support).forEach(function (id) { lines.push('candidate ' + id + ' supported by ' + support[id].join(', ')); });
  return lines;
}

// One table per Context: its items with trust and claim, then its candidates with their support.
function renderContexts(list) {
  if (!list.length) return '<p id="contexts">none compiled yet</p>';
  return '<div id="contexts">' + list.map(function (c) {
    var items = c.items.map(function (i) {
      var where = i.location ? i.location.in + ' ' + i.location.path : '';
      return '<tr class="item" data-source="' + esc(i.sourceId) + '"><td>' + esc(i.sourceId) + (i.revision !== undefined ? ' (revision ' + i.revision + ')' : '') + '</td>' +
        '<td class="' + esc(i.trust) + '">' + esc(i.trust) + '</td><td>' + esc(i.claim) + '</td><td><code>' + esc(digest12(i.digest)) + '</code></td>' +
        '<td>' + esc(where) + '</td><td>' + esc(i.dependsOn.join(', ')) + '</td><td>' + esc(i.selectedBy) + '</td></tr>';
    }).join('');
    var candidates = c.candidates.map(function (k) {
      return '<tr class="candidate" data-candidate="' + esc(k.id) + '"><td>candidate ' + esc(k.id) + '</td><td class="' + esc(k.authority) + '">' + esc(k.authority) + '</td>' +
        '<td colspan="3">supported by ' + esc(k.supportedBy.map(function (s) { return s.sourceId + ' (' + s.trust + ')'; }).join(', ') || 'nothing') + '</td>' +
        '<td colspan="2">action: <code>' + esc(describeAction(k.action)) + '</code></td></tr>';
    }).join('');
    return '<table class="context" data-generation="' + c.generation + '"><caption>context r' + c.revision + ' g' + c.generation + ' ' + esc(c.stage || '-') +
      ' <code>' + esc(digest16(c.contextDigest)) + '</code>' + (c.goalRevision !== null ? ' · goal revision ' + c.goalRevision : '') +
      (c.format === 'sources' ? ' · compiled before read sets: trust from its source class, claims not recorded' : '') + '</caption>' +
      '<tr><th>source</th><th>trust</th><th>claim</th><th>digest</th><th>where</th><th>depends on</th><th>selected</th></tr>' + items + candidates + '</table>';
  }).join('') + '</div>';
}

function renderTask(v) {
  if (!v || v.error) { $('task').innerHTML = v && v.error ? '<p class="err">' + esc(v.error.code) + '</p>' : '<p>select a task</p>'; return; }
  var c = v.context;
  var assignments = v.events.filter(function (e) { return e.type === 'assignment.commit'; });
  var rows = function (list, f) { return list.length ? list.map(f).join('') : '<tr><td colspan="9">none</td></tr>'; };
  $('task').innerHTML =
    '<h2>' + esc(v.title) + '</h2>' +
    '<p><code>' + esc(v.taskId) + '</code> state <strong id="state">' + esc(v.state) + '</strong>' + (v.queued ? ' (<span id="queued">' + esc(queuedText(v.queued)) + '</span>)' : '') + ' · revision <span id="revision">' + v.revision + '</span> · generation ' + c.generation + ' · frontier ' + esc(v.frontier) + '</p>' +
    (v.state === 'completed' || v.state === 'cancelled' ? '' : '<p><button type="button" id="cancel" data-task="' + esc(v.taskId) + '">cancel this Task</button> </p>') +
    '<p id="cancel-result">' + esc(cancelNote) + '</p>' +
    '<div class="chart" id="chart-box"></div>' +
    '<h3>Outcome</h3><section id="outcome"></section>' +
    '<h3>Assignments</h3><table><tr><th>generation</th><th>harness</th><th>purpose</th><th>revision</th><th>disposition</th></tr>' +
    rows(assignments, function (e) { return '<tr><td>' + esc(e.data.generation) + '</td><td>' + esc(e.data.harness) + '</td><td>' + esc(e.data.purpose) + '</td><td>' + e.revision + '</td><td>' + (e.disposition.admitted ? 'admitted' : esc(e.disposition.code)) + '</td></tr>'; }) + '</table>' +
    '<h3>Runs</h3><table id="runs"><tr><th>revision</th><th>generation</th><th>harness</th><th>provider</th><th>job / stop</th><th>sandbox</th></tr>' +
    rows(v.runs || [], function (r) { return '<tr><td>' + r.revision + '</td><td>' + r.generation + '</td><td>' + esc(r.harness) + '</td><td>' + esc(r.provider) + '</td><td>' + esc(r.jobStatus) + ' / ' + esc(r.stopReason) + '</td><td class="confinement">' + (r.confined === false ? '<strong class="err">unconfined</strong>' : r.confined ? 'confined' : '-') + '</td></tr>'; }) + '</table>' +
    '<h3>Cost</h3><div id="cost"></div>' +
    '<h3>Transcripts</h3><div id="transcripts"></div>' +
    '<h3>Evidence</h3><table><tr><th>artifact</th><th>digest</th><th>generation</th></tr>' +
    rows(Object.keys(c.evidence), function (n) { return '<tr><td>' + esc(n) + '</td><td><code>' + esc(c.evidence[n].digest.slice(0, 19)) + '…</code></td><td>' + c.evidence[n].generation + '</td></tr>'; }) + '</table>' +
    renderRequests(v) +
    renderBranch(v.branch, rows) +
    '<h3>Contexts</h3>' + renderContexts(v.contexts) +
    '<h3>Rejections</h3><table id="rejections"><tr><th>revision</th><th>event</th><th>generation</th><th>code</th><th>detail</th><th>caused by</th></tr>' +
    rows(v.rejections, function (r) { return '<tr class="rejected"><td>' + r.revision + '</td><td>' + esc(r.event) + '</td><td>' + (r.generation === null ? '-' : r.generation) + '</td><td><code>' + esc(r.code) + '</code></td><td>' + esc(r.detail || '') + '</td><td class="causes">' + causeLines(r.causes || []).map(esc).join('<br>') + '</td></tr>'; }) + '</table>' +
    '<h3>Events</h3><table id="events"><tr><th>#</th><th>at</th><th>origin</th><th>type</th><th>disposition</th></tr>' +
    rows(v.events.slice().reverse(), function (e) { return '<tr class="' + (e.disposition.admitted ? '' : 'rejected') + '"><td>' + e.revision + '</td><td>' + esc(e.at) + '</td><td>' + esc(e.origin) + '</td><td>' + esc(e.type) + '</td><td>' + (e.disposition.admitted ? 'admitted' : '<code>' + esc(e.disposition.code) + '</code>') + '</td></tr>'; }) + '</table>';
}

// A branch stage's tree (views/task-branch.ts): the join, then each child with why it won or lost.
function renderBranch(b, rows) {
  if (!b) return '';
  var head = b.joined ? (b.winners.length ? 'joined: ' + b.winners.join(', ') + ' (' + (b.reason || '') + ')' : 'not met (' + (b.reason || '') + ')') : 'waiting for its children';
  return '<h3>Branch</h3><p id="branch-head"><code>' + esc(b.branchId) + '</code> ' + esc(b.kind) + ', join ' + esc(b.join) + ': ' + esc(head) + '</p>' +
    '<table id="branch"><tr><th>child</th><th>harness</th><th>item</th><th>state</th><th>generation</th><th>verified</th><th>outcome</th><th>why</th></tr>' +
    rows(b.children, function (k) { return '<tr data-outcome="' + esc(k.outcome) + '"><td><a href="#' + encodeURIComponent(k.taskId) + '"><code>' + esc(k.taskId) + '</code></a></td><td>' + esc(k.harness) + '</td><td>' + esc(k.item || '') + '</td><td>' + esc(k.state) + '</td><td>' + (k.generation === null ? '-' : k.generation) + '</td><td>' + (k.verified ? 'verified' : 'unverified') + '</td><td>' + esc(k.outcome) + '</td><td>' + esc(k.why) + '</td></tr>'; }) + '</table>';
}

function refresh() {
  selected = decodeURIComponent(location.hash.slice(1)) || selected;
  return checked('/tasks', SHAPES.tasks).then(function (list) {
    tasks = list;
    if (!selected && tasks.length) selected = tasks[0].taskId;
    renderList();
    if (!selected) return renderTask(null);
    return checked('/tasks/' + encodeURIComponent(selected) + '?events=1', SHAPES.task).then(function (v) { renderTask(v); return refreshStory(v); });
  }).then(refreshInbox).catch(function (e) {
    var p = document.createElement('p');
    p.className = 'err'; p.id = 'page-error'; p.textContent = String(e.message || e);
    $('task').prepend(p);
  }).then(function () { document.body.dataset.revision = String(Date.now()); });
}

// One refresh at a time; a commit heard during one (which may have read the Task before it) runs
// one more after it, so the page always ends on the latest state.
var pending = null, again = false;
function schedule() {
  if (pending) { again = true; return; }
  pending = Promise.resolve().then(refresh).finally(function () { pending = null; if (again) { again = false; schedule(); } });
}
window.addEventListener('hashchange', schedule);
refresh().then(function () {
  var stream = new EventSource('/events' + (token ? '?access_token=' + encodeURIComponent(token) : ''));
  stream.addEventListener('commit', schedule);
  stream.onopen = function () { $('live').textContent = 'live'; $('live').className = 'on'; schedule(); };
  stream.onerror = function () { $('live').textContent = 'reconnecting'; $('live').className = ''; };
});
`;
