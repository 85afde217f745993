import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { operatorRequest } from '../support/decision-requests.js';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';
import { http, startServe } from './serve-child.js';

describe("the page's read routes (docs/service.md#routes)", { timeout: 60_000 }, () => {
  it('answers the layout, the inbox, an open Task’s outcome and story, and refuses what the docs say', async () => {
    const serve = await startServe(['--state', join(tempDir(), 'state'), '--port', '0', '--no-harnesses']);
    try {
      const api = serve.ready;
      assert.equal((await http(api, 'POST', '/tasks', { body: { ...SPEC, taskId: 'r-1' } })).status, 201);

      const layout = await http(api, 'GET', '/graph/layout');
      assert.equal(layout.status, 200);
      const states = new Set((layout.body.states as Array<{ id: string }>).map((s) => s.id));
      const edges = layout.body.edges as Array<{
        source: string;
        target: string;
        event: string;
        label: { text: string };
      }>;
      assert.ok(edges.length >= 60 && layout.body.width > 0 && layout.body.height > 0);
      for (const e of edges) {
        assert.equal(e.label.text, e.event, 'every edge is labelled with its event');
        assert.ok(states.has(e.source) && states.has(e.target) && e.source !== e.target, `${e.source} → ${e.target}`);
      }

      const outcome = await http(api, 'GET', '/tasks/r-1/outcome');
      assert.deepEqual(
        [outcome.status, outcome.body],
        [200, { taskId: 'r-1', state: 'open', verification: null, outcome: null }],
      );
      const story = await http(api, 'GET', '/tasks/r-1/story');
      assert.deepEqual(
        [story.status, story.body],
        [
          200,
          {
            taskId: 'r-1',
            path: [{ revision: 1, event: 'task.created', from: 'new', to: 'open' }],
            runs: [],
            cost: { runs: 0, tokensReported: 0, input: null, output: null, total: null, costReported: 0, amounts: {} },
          },
        ],
      );

      assert.deepEqual((await http(api, 'GET', '/requests')).body, { requests: [] });
      assert.equal((await http(api, 'POST', '/tasks/r-1/requests', { body: operatorRequest('ship-it') })).status, 201);
      const inbox = (await http(api, 'GET', '/requests')).body.requests as Array<Record<string, unknown>>;
      assert.deepEqual(
        inbox.map((r) => [r.taskId, r.title, r.requestId, r.status, r.allowed]),
        [['r-1', SPEC.title, 'ship-it', 'pending', ['ship', 'hold']]],
      );

      for (const [method, path, status, code] of [
        ['GET', '/tasks/nope/outcome', 404, 'task_not_found'],
        ['GET', '/tasks/nope/story', 404, 'task_not_found'],
        ['GET', '/tasks/bad%20id/story', 400, 'invalid_request'],
        ['POST', '/tasks/r-1/outcome', 405, 'method_not_allowed'],
        ['POST', '/requests', 405, 'method_not_allowed'],
        ['PUT', '/graph/layout', 405, 'method_not_allowed'],
      ] as const) {
        const res = await http(api, method, path, method === 'GET' ? {} : { body: {} });
        assert.deepEqual([res.status, res.body.error?.code], [status, code], `${method} ${path}`);
      }
    } finally {
      assert.equal((await serve.stop()).code, 0, serve.stderr());
    }
  });
});
