/**
 * The page's DecisionRequests section, as browser script text (inlined by page.ts after
 * PAGE_SCRIPT, whose `renderTask` calls `renderRequests` and whose `esc` and `auth` it uses): each request with the fields `ordivon show` prints,
 * and on a pending one a button per answer it takes. A click POSTs the answer to
 * `/tasks/:id/requests/:requestId/answer` and shows what came back, the refusal's code and detail
 * included; the SSE commit that follows redraws the Task. No template literals, so it can sit in one.
 */
export const PAGE_REQUESTS_SCRIPT = String.raw`
var lastAnswer = null; // what the last click got back: kept across redraws
function requestRow(taskId, r) {
  var world = r.worldRevision.map(function (s) { return s.sourceId + ' ' + String(s.digest).slice(0, 19) + '…'; }).join(', ') || 'none';
  var buttons = r.status === 'pending' ? r.allowed.map(function (a) {
    return '<button type="button" data-task="' + esc(taskId) + '" data-request="' + esc(r.requestId) + '" data-answer="' + esc(a) + '">' + esc(a) + '</button>';
  }).join(' ') : '';
  var outcome = r.answered ? 'answered ' + r.answered.answer + ' by ' + r.answered.answeredBy + ' at r' + r.answered.revision + (r.answered.note ? ' (' + r.answered.note + ')' : '') : '';
  var refusals = r.refusals.map(function (x) { return 'refused r' + x.revision + ' ' + x.answer + ' by ' + x.answeredBy + ': ' + x.code; });
  return '<tr class="request" data-request="' + esc(r.requestId) + '" data-status="' + esc(r.status) + '">' +
    '<td>' + esc(r.requestId) + '<br>' + esc(r.about) + '</td><td class="status">' + esc(r.status) + '</td><td>' + esc(r.participant) + '</td>' +
    '<td>' + esc(r.pendingAction) + '<br>' + esc(r.alternatives.map(function (a) { return a.id + ': ' + a.summary; }).join('; ')) + '</td>' +
    '<td>' + esc(r.consequence) + '<br>' + esc(r.reversibility) + ' · ' + esc(r.authority) + '</td>' +
    '<td>' + esc(r.expiresAt || 'no deadline') + '</td><td>g' + r.generation + ' · ' + esc(world) + '</td>' +
    '<td class="outcome">' + esc(outcome) + (refusals.length ? '<br>' + refusals.map(esc).join('<br>') : '') + '</td><td>' + buttons + '</td></tr>';
}
function renderRequests(v) {
  var list = v.requests || [];
  var shown = lastAnswer ? '<p id="answer-result" class="' + (lastAnswer.code === 'admitted' ? '' : 'err') + '" data-code="' + esc(lastAnswer.code) + '">' + esc(lastAnswer.text) + '</p>' : '';
  return '<h3>Decision requests</h3>' + shown + '<table id="requests"><tr><th>request</th><th>status</th><th>participant</th><th>pending action · alternatives</th>' +
    '<th>consequence</th><th>expires</th><th>bound to</th><th>answer · refusals</th><th>answer</th></tr>' +
    (list.length ? list.map(function (r) { return requestRow(v.taskId, r); }).join('') : '<tr><td colspan="9">none</td></tr>') + '</table>';
}
document.addEventListener('click', function (e) {
  var b = e.target;
  if (!b || !b.dataset || !b.dataset.answer) return;
  var path = '/tasks/' + encodeURIComponent(b.dataset.task) + '/requests/' + encodeURIComponent(b.dataset.request) + '/answer';
  var headers = Object.assign({ 'content-type': 'application/json' }, auth);
  fetch(path, { method: 'POST', headers: headers, body: JSON.stringify({ answer: b.dataset.answer, answeredBy: 'page' }) })
    .then(function (r) { return r.json(); })
    .then(function (a) {
      lastAnswer = a.error
        ? { code: a.error.code, text: b.dataset.request + ' ' + b.dataset.answer + ': ' + a.error.code + ': ' + a.error.message }
        : { code: 'admitted', text: 'answered ' + b.dataset.request + ' with ' + b.dataset.answer };
      schedule();
    });
});
`;
