/**
 * The page's story of a Task, as browser script text (inlined by page.ts before PAGE_SCRIPT, whose
 * `$`, `get`, `auth`, `selected` and `schedule` it uses): the statechart as ELK laid it out
 * (`/graph/layout`) with the Task's path highlighted, the outcome (`/tasks/:id/outcome`), each
 * run's transcript with its tokens, cost and confinement, the Task's cost (`/tasks/:id/story`),
 * the inbox of pending DecisionRequests across Tasks (`/requests`) and cancel. Every answer is
 * checked against the shape the page reads (`checked`) before it is drawn, and every text that
 * came from a provider, a spec or a workspace is put in as a text node, never as markup.
 * No template literals, so it can sit in one.
 */
export const PAGE_STORY_SCRIPT = String.raw`
// A shape is a type list ('string|null'), [item shape] or {field: shape}; other fields are ignored.
function checkShape(v, shape, at) {
  if (typeof shape === 'string') {
    var kind = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
    if (shape.split('|').indexOf(kind) < 0) throw new Error(at + ' is ' + kind + ', not ' + shape);
  } else if (Array.isArray(shape)) {
    if (!Array.isArray(v)) throw new Error(at + ' is not an array');
    v.forEach(function (x, i) { checkShape(x, shape[0], at + '[' + i + ']'); });
  } else {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error(at + ' is not an object');
    Object.keys(shape).forEach(function (k) { checkShape(v[k], shape[k], at + '.' + k); });
  }
  return v;
}
function checked(path, shape) {
  return get(path).then(function (v) {
    if (v && v.error && typeof v.error.code === 'string') throw new Error(path + ': ' + v.error.code + ': ' + v.error.message);
    return checkShape(v, shape, path);
  });
}
var N = 'number', S = 'string', SN = 'string|null', NN = 'number|null';
var SHAPES = {
  tasks: [{ taskId: S, title: S, state: S, revision: N, generation: N }],
  task: { taskId: S, title: S, state: S, revision: N, frontier: S, context: { generation: N, evidence: 'object' }, runs: [{ revision: N, generation: N, harness: S, provider: S, jobStatus: S, stopReason: S }], rejections: 'array', contexts: 'array', requests: 'array|undefined', events: [{ revision: N, at: S, origin: S, type: S, disposition: { admitted: 'boolean' } }] },
  layout: { width: N, height: N, states: [{ id: S, parent: SN, type: S, label: S, x: N, y: N, width: N, height: N }], edges: [{ id: S, source: S, target: S, event: S, guard: SN, points: [[N]], label: { text: S, x: N, y: N } }] },
  story: { taskId: S, path: [{ revision: N, event: S, from: S, to: S }], runs: [{ revision: N, generation: N, harness: S, provider: S, confined: 'boolean|null', tokens: 'object|null', cost: 'object|null', transcript: [{ kind: S, from: S }] }], cost: { runs: N, tokensReported: N, input: NN, output: NN, total: NN, costReported: N, amounts: 'object' } },
  outcome: { taskId: S, state: S, verification: 'object|null', outcome: 'object|null' },
  outcomeBody: { attempt: N, generation: N, sourceDigest: S, resultArtifact: SN, resultText: S, workspace: S, diff: { patch: SN, error: 'object|null' } },
  requests: { requests: [{ taskId: S, title: S, requestId: S, about: S, status: S, participant: S, pendingAction: S, allowed: [S] }] }
};

// An element with attributes; string children become text nodes (data, never markup).
function el(tag, attrs, kids) {
  var svg = ['svg', 'g', 'rect', 'path', 'text', 'title', 'defs', 'marker'].indexOf(tag) >= 0;
  var e = svg ? document.createElementNS('http://www.w3.org/2000/svg', tag) : document.createElement(tag);
  Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, String(attrs[k])); });
  (kids || []).forEach(function (k) { if (k !== null && k !== undefined) e.appendChild(typeof k === 'object' ? k : document.createTextNode(String(k))); });
  return e;
}
function fill(id, kids) { var box = $(id); if (!box) return; box.textContent = ''; kids.forEach(function (k) { box.appendChild(k); }); }
var layoutOnce = null;
// ELK's layout is ~4,500 by ~1,000 units: drawn at three quarters, scrolled to the current state.
var CHART_SCALE = 0.75;

// The statechart as ELK placed it: visited states and the edges the Task took marked as its path.
function drawChart(current, path) {
  var L = layoutOnce, on = {}, taken = {};
  var within = function (state, of) { return state === of || state.indexOf(of + '.') === 0; };
  path.forEach(function (p) {
    [p.from, p.to].forEach(function (s) { s.split('.').forEach(function (_, i, all) { on[all.slice(0, i + 1).join('.')] = true; }); });
    L.edges.forEach(function (e) { if (e.event === p.event && within(p.from, e.source) && within(p.to, e.target)) taken[e.id] = true; });
  });
  var svg = el('svg', { id: 'chart', viewBox: '0 0 ' + L.width + ' ' + L.height, width: L.width * CHART_SCALE, height: L.height * CHART_SCALE },
    [el('defs', {}, [el('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 6, markerHeight: 6, orient: 'auto' }, [el('path', { d: 'M0,0L10,5L0,10z', fill: '#667' })])])]);
  L.states.forEach(function (s) {
    var cls = 'state' + (s.type === 'compound' ? ' compound' : '') + (s.type === 'final' ? ' final' : '') +
      (current === s.id ? ' current' : within(current, s.id) ? ' active' : '') + (on[s.id] ? ' visited' : '');
    svg.appendChild(el('g', { 'class': cls, 'data-state': s.id }, [
      el('rect', { x: s.x, y: s.y, width: s.width, height: s.height, rx: 8 }),
      el('text', { x: s.x + s.width / 2, y: s.y + (s.type === 'compound' ? 17 : s.height / 2 + 4) }, [s.label])]));
  });
  L.edges.forEach(function (e) {
    var d = e.points.map(function (p, i) { return (i ? 'L' : 'M') + p[0] + ',' + p[1]; }).join(' ');
    svg.appendChild(el('g', { 'class': 'edge' + (taken[e.id] ? ' path' : ''), 'data-edge': e.id, 'data-event': e.event, 'data-source': e.source, 'data-target': e.target }, [
      el('path', { d: d, 'marker-end': 'url(#arrow)' }, [el('title', {}, [e.event + (e.guard ? ' [' + e.guard + ']' : '')])]),
      el('text', { 'class': 'label', x: e.label.x, y: e.label.y + 10 }, [e.label.text])]));
  });
  return svg;
}

function tokensText(t) { return t ? [t.input === null ? '-' : t.input, t.output === null ? '-' : t.output, t.total === null ? '-' : t.total] : ['not reported', 'not reported', 'not reported']; }
function costText(c) { return c ? c.amount + ' ' + c.currency : 'not reported'; }

function entryNode(x) {
  var body;
  if (x.kind === 'prompt') body = el('details', {}, [el('summary', {}, ['host → agent: prompt (' + x.text.length + ' characters)']), el('pre', {}, [x.text])]);
  else if (x.kind === 'message') body = el('div', {}, ['agent: message', el('pre', {}, [x.text])]);
  else if (x.kind === 'tool') body = el('details', {}, [el('summary', {}, ['agent ran a tool: ' + x.title + (x.status ? ' (' + x.status + ')' : '')]), el('pre', {}, [x.output === null ? '(no output reported)' : x.output])]);
  else if (x.kind === 'omitted') body = el('div', {}, [x.steps + ' more steps, counted but not kept']);
  else if (x.kind === 'permission') body = el('div', {}, ['agent asked to ' + x.ask + ': ' + x.text + (x.command ? ' (' + x.command + ')' : '') + ' → ' + x.answer + ' (' + x.reason + ')']);
  else if (x.kind === 'tools') body = el('div', {}, ['tool calls: ' + x.started + ' started, ' + x.completed + ' completed']);
  else if (x.kind === 'artifact') body = el('div', {}, ['artifact written: ' + x.name + ' (' + x.bytes + ' bytes, ' + String(x.digest).slice(0, 19) + '…)']);
  else if (x.kind === 'stop') body = el('div', {}, ['stopped: ' + x.stopReason + (x.exitCode === null ? '' : ', exit ' + x.exitCode) + ', ' + Math.round(x.durationMs) + ' ms']);
  else body = el('div', {}, [x.kind]);
  return el('li', { 'class': 'entry', 'data-kind': x.kind, 'data-from': x.from }, [body]);
}

function renderStory(v, story, outcome) {
  fill('chart-box', [drawChart(v.state, story.path)]);
  var at = layoutOnce.states.find(function (s) { return s.id === v.state; }), box = $('chart-box');
  if (at) { box.scrollLeft = at.x * CHART_SCALE - box.clientWidth / 2; box.scrollTop = at.y * CHART_SCALE - box.clientHeight / 2; }
  fill('transcripts', story.runs.length ? story.runs.map(function (r) {
    return el('section', { 'class': 'run', 'data-revision': r.revision }, [
      el('h4', {}, ['g' + r.generation + ' ' + r.harness + ' (' + r.provider + ') · ',
        el('span', { 'class': 'confined' }, [r.confined === null ? 'confinement not recorded' : r.confined ? 'confined' : 'unconfined']),
        ' · tokens ' + tokensText(r.tokens).join(' / ') + ' · cost ' + costText(r.cost)]),
      el('ol', { 'class': 'transcript' }, r.transcript.map(entryNode))]);
  }) : [el('p', {}, ['no runs yet'])]);
  var c = story.cost;
  var rows = story.runs.map(function (r) {
    return el('tr', { 'data-revision': r.revision }, [el('td', {}, ['g' + r.generation + ' ' + r.harness])].concat(tokensText(r.tokens).map(function (t) { return el('td', {}, [t]); }), [el('td', {}, [costText(r.cost)])]));
  });
  var amounts = Object.keys(c.amounts).map(function (k) { return c.amounts[k] + ' ' + k; }).join(', ');
  rows.push(el('tr', { 'class': 'total' }, [el('td', {}, ['Task (' + c.tokensReported + ' of ' + c.runs + ' runs reported tokens)'])].concat(
    tokensText(c.tokensReported ? c : null).map(function (t) { return el('td', {}, [t]); }), [el('td', {}, [c.costReported ? amounts : 'not reported'])])));
  fill('cost', [el('table', {}, [el('tr', {}, ['run', 'input tokens', 'output tokens', 'total tokens', 'cost'].map(function (h) { return el('th', {}, [h]); }))].concat(rows))]);
  var ver = outcome.verification;
  var kids = [el('p', { id: 'verification', 'data-passed': ver ? ver.passed : 'none' }, [ver ? 'verification ' + (ver.passed ? 'passed' : 'failed') + ' (generation ' + ver.generation + ', job ' + ver.jobId + ', exit ' + (ver.exitCode === null ? '-' : ver.exitCode) + (ver.frozenTestsIntact ? ', frozen tests intact' : ', frozen tests changed') + ')' : 'no verification yet'])];
  var o = outcome.outcome;
  if (o) {
    kids.push(el('p', {}, ['accepted attempt ' + o.attempt + ', generation ' + o.generation + ' · workspace ', el('code', { id: 'workspace' }, [o.workspace])]));
    kids.push(el('h4', {}, ['result' + (o.resultArtifact ? ' (' + o.resultArtifact + ')' : '')]), el('pre', { id: 'result-text' }, [o.resultText]));
    kids.push(el('h4', {}, ['diff against the seed']));
    kids.push(o.diff.error ? el('p', { id: 'diff-error', 'class': 'err' }, [o.diff.error.code + ': ' + o.diff.error.message])
      : el('pre', { id: 'diff' }, o.diff.patch ? o.diff.patch.split('\n').map(function (line) {
        return el('span', { 'class': line[0] === '+' ? 'add' : line[0] === '-' ? 'del' : '' }, [line + '\n']);
      }) : ['(no change)']));
  } else kids.push(el('p', {}, ['no outcome: the Task is ' + v.state]));
  fill('outcome', kids);
}

function renderInbox(list) {
  fill('inbox', [el('h3', {}, ['Inbox (' + list.length + ')'])].concat(list.length ? list.map(function (r) {
    return el('div', { 'class': 'inbox-item', 'data-task': r.taskId, 'data-request': r.requestId }, [
      el('a', { href: '#' + encodeURIComponent(r.taskId) }, [r.title || r.taskId]), ' · ' + r.about + ' · ' + r.participant,
      el('div', {}, [r.pendingAction]),
      el('div', {}, r.allowed.map(function (a) { return el('button', { type: 'button', 'data-task': r.taskId, 'data-request': r.requestId, 'data-answer': a }, [a]); }))]);
  }) : [el('p', {}, ['nothing pending'])]));
}

// What refresh reads besides the Task view: each answer checked before any of it is drawn.
// A Task's story and outcome change only with its revision: another Task's commit reuses them (the
// outcome's diff runs git on the Host).
var storyOf = { key: null, parts: null };
function refreshStory(v) {
  var id = encodeURIComponent(v.taskId), key = v.taskId + '@' + v.revision;
  if (storyOf.key === key) return Promise.resolve(renderStory(v, storyOf.parts[0], storyOf.parts[1]));
  return Promise.all([
    layoutOnce ? layoutOnce : checked('/graph/layout', SHAPES.layout),
    checked('/tasks/' + id + '/story', SHAPES.story),
    checked('/tasks/' + id + '/outcome', SHAPES.outcome).then(function (o) { if (o.outcome) checkShape(o.outcome, SHAPES.outcomeBody, 'outcome'); return o; })
  ]).then(function (all) {
    layoutOnce = all[0];
    storyOf = { key: key, parts: [all[1], all[2]] };
    if (selected === v.taskId) renderStory(v, all[1], all[2]);
  });
}
function refreshInbox() { return checked('/requests', SHAPES.requests).then(function (r) { renderInbox(r.requests); }); }

document.addEventListener('click', function (e) {
  var b = e.target;
  if (!b || b.id !== 'cancel') return;
  var headers = Object.assign({ 'content-type': 'application/json' }, auth);
  fetch('/tasks/' + encodeURIComponent(b.dataset.task) + '/events', { method: 'POST', headers: headers, body: JSON.stringify({ type: 'task.cancel', reason: 'cancelled from the page' }) })
    .then(function (r) { return r.json(); })
    .then(function (a) {
      checkShape(a, { taskId: S }, 'cancel');
      // Kept across redraws, as the last answer's result is (page-requests.ts).
      cancelNote = a.error ? a.error.code + ': ' + a.error.message : a.code ? 'refused: ' + a.code : 'cancelled: the Task is ' + a.state;
      schedule();
    });
});
`;
