import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext } from 'playwright-core';
import { CHROMIUM_ARGS } from '../../adapters/index.js';
import { CHROMIUM } from '../support/chromium.js';
import { operatorRequest } from '../support/decision-requests.js';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';
import { until } from '../support/until.js';
import { http, startServe, type Ready } from './serve-child.js';

const ARTIFACTS = fileURLToPath(new URL('../../../test-artifacts/', import.meta.url));

/** Drives the demo's two stages through the API (as the demo's scenario A does) and waits for `state`. */
async function driveDemo(api: Ready, taskId: string): Promise<void> {
  const send = (body: object) => http(api, 'POST', `/tasks/${taskId}/events`, { body });
  const reach = (state: string) =>
    until(`${taskId} ${state}`, 120_000, async () => {
      const task = await http(api, 'GET', `/tasks/${taskId}`);
      return task.body.state === state ? true : undefined;
    });
  assert.equal((await http(api, 'POST', '/tasks', { body: { workload: 'hamilton-v1', taskId } })).status, 201);
  assert.equal((await send({ type: 'assignment.commit', harness: 'codex', stage: 'diagnose' })).status, 200);
  await reach('waiting');
  assert.equal((await send({ type: 'assignment.commit', harness: 'hermes', stage: 'repair' })).status, 200);
  await reach('completed');
}

describe("the service page tells a Task's whole story, in headless Chromium", { timeout: 300_000 }, () => {
  it(
    'shows the outcome, each run with its transcript and tokens, the cost, the inbox across Tasks, cancel, and the path on the laid-out statechart',
    { skip: CHROMIUM.skip },
    async () => {
      const dir = tempDir();
      const state = join(dir, 'state');
      const serve = await startServe(['--state', state, '--port', '0', '--demo-harnesses']);
      let context: BrowserContext | undefined;
      try {
        const api = serve.ready;
        await driveDemo(api, 'story-1');
        // Two Tasks each with a pending question; one's text is markup, which must stay text.
        for (const [taskId, requestId] of [
          ['ask-1', 'ship-it'],
          ['ask-2', 'roll-out'],
        ] as const) {
          assert.equal((await http(api, 'POST', '/tasks', { body: { ...SPEC, taskId } })).status, 201);
          const body = {
            ...operatorRequest(requestId),
            pendingAction: `<img src=x onerror="document.title='owned'"> ${taskId}`,
          };
          assert.equal((await http(api, 'POST', `/tasks/${taskId}/requests`, { body })).status, 201);
        }
        assert.equal((await http(api, 'POST', '/tasks', { body: { ...SPEC, taskId: 'to-cancel' } })).status, 201);
        const story = (await http(api, 'GET', '/tasks/story-1/story')).body;
        const layout = (await http(api, 'GET', '/graph/layout')).body;

        context = await chromium.launchPersistentContext(join(dir, 'profile'), {
          executablePath: CHROMIUM.need(),
          headless: true,
          args: [...CHROMIUM_ARGS],
        });
        const page = context.pages()[0] ?? (await context.newPage());
        await page.setViewportSize({ width: 1400, height: 1000 });
        await page.goto(api.login!);
        await page.goto(`${api.url}/#story-1`);

        // The outcome: verification, the result artifact as text, the workspace, the diff from the seed.
        await page.locator('#verification[data-passed="true"]').waitFor();
        assert.match(
          (await page.locator('#verification').textContent()) ?? '',
          /^verification passed \(generation 2, /,
        );
        assert.match(
          (await page.locator('#result-text').textContent()) ?? '',
          /"filesChanged": \[\s+"src\/allocate\.js"/,
        );
        assert.equal(await page.locator('#workspace').textContent(), join(state, 'workspaces', 'story-1', 'attempt-1'));
        assert.match(
          (await page.locator('#diff').textContent()) ?? '',
          /^diff --git a\/src\/allocate\.js b\/src\/allocate\.js/,
        );
        assert.ok((await page.locator('#diff span.add').count()) > 0, 'added lines are marked');

        // Each run: its transcript as the receipt holds it, confined, with its tokens.
        const runs = page.locator('#transcripts section.run');
        assert.equal(await runs.count(), 2);
        type Run = {
          revision: number;
          tokens: Record<'input' | 'output' | 'total', number>;
          cost: { amount: number; currency: string } | null;
          transcript: Array<{ kind: string }>;
        };
        const costOf = (r: Run) => (r.cost ? `${r.cost.amount} ${r.cost.currency}` : 'not reported');
        for (const [i, run] of (story.runs as Run[]).entries()) {
          const section = runs.nth(i);
          const kinds = run.transcript.map((e) => e.kind);
          for (const kind of ['prompt', 'tools', 'message', 'artifact', 'stop']) assert.ok(kinds.includes(kind), kind);
          // What the agent did, call by call: the tool calls its protocol reported, each with a title.
          const tools = run.transcript.filter((e) => e.kind === 'tool') as Array<{ kind: string; title: string }>;
          assert.ok(tools.length > 0, `run ${run.revision} shows its tool calls`);
          for (const tool of tools) assert.ok(tool.title.length > 0);
          assert.equal(
            await section.locator('li.entry[data-kind="tool"] summary').count(),
            tools.length,
            'each tool call is drawn',
          );
          assert.deepEqual(
            await section.locator('li.entry').evaluateAll((items) => items.map((e) => e.getAttribute('data-kind'))),
            kinds,
          );
          const { input, output, total } = run.tokens;
          assert.ok(
            ((await section.locator('h4').textContent()) ?? '').endsWith(
              ` · confined · tokens ${input} / ${output} / ${total} · cost ${costOf(run)}`,
            ),
          );
          assert.deepEqual(
            (await page.locator(`#cost tr[data-revision="${run.revision}"] td`).allTextContents()).slice(1),
            [String(input), String(output), String(total), costOf(run)],
          );
        }
        assert.match(
          (await runs.nth(0).locator('li.entry[data-kind="prompt"] pre').textContent()) ?? '',
          /^# Task story-1 /,
        );
        assert.equal(
          await runs.nth(1).locator('li.entry[data-kind="message"] pre').textContent(),
          'Repaired: all tests pass.',
        );
        assert.match(
          (await runs.nth(1).locator('li.entry[data-kind="permission"]').first().textContent()) ?? '',
          /^agent asked to \w+: .*\/src\/allocate\.js → allow \(configured_accept\)$/,
        );
        const sum = (k: 'input' | 'output' | 'total') =>
          String((story.runs as Array<{ tokens: Record<string, number> }>).reduce((n, r) => n + r.tokens[k]!, 0));
        assert.deepEqual(await page.locator('#cost tr.total td').allTextContents(), [
          'Task (2 of 2 runs reported tokens)',
          sum('input'),
          sum('output'),
          sum('total'),
          story.cost.costReported
            ? Object.entries(story.cost.amounts)
                .map(([c, n]) => `${n} ${c}`)
                .join(', ')
            : 'not reported',
        ]);
        // The ACP agent reports what its turn cost (the scripted model: nothing); Codex reports none.
        assert.deepEqual((story.runs as Run[]).map(costOf), ['not reported', '0 USD']);

        // The statechart as ELK laid it out: every edge labelled, the Task's path highlighted.
        assert.equal(await page.locator('#chart g.edge').count(), layout.edges.length);
        assert.ok(layout.edges.length >= 60, `${layout.edges.length} edges`);
        assert.equal(await page.locator('#chart g.edge text.label').count(), layout.edges.length);
        await page.locator('g.state.current[data-state="completed"]').waitFor();
        for (const [event, source, target] of [
          ['task.created', 'new', 'open'],
          ['evaluation.settle', 'evaluating', 'waiting'],
          ['verification.record', 'verifying', 'completed'],
        ])
          assert.equal(
            await page
              .locator(`g.edge.path[data-event="${event}"][data-source="${source}"][data-target="${target}"]`)
              .count(),
            1,
            `${source} → ${target} on ${event} is on the path`,
          );
        assert.equal(await page.locator('g.edge.path[data-target="blocked"]').count(), 0, 'no edge it did not take');
        assert.equal(await page.locator('g.state.visited[data-state="authorizing"]').count(), 0);
        assert.equal(await page.locator('g.state.visited[data-state="assigned.running"]').count(), 1);

        mkdirSync(ARTIFACTS, { recursive: true });
        await page.screenshot({ path: join(ARTIFACTS, 'page-task.png') });

        // One inbox across Tasks; an answer given there leaves it, and the Host has it.
        const items = page.locator('#inbox .inbox-item');
        assert.equal(await items.count(), 2);
        assert.equal(await page.locator('#inbox img').count(), 0, 'markup in a request is shown as text');
        assert.match((await items.nth(0).textContent()) ?? '', /<img src=x onerror=/);
        assert.deepEqual(await items.nth(0).locator('button').allTextContents(), ['ship', 'hold']);
        await page.locator('#inbox .inbox-item[data-task="ask-1"] button[data-answer="hold"]').click();
        await page.locator('#inbox .inbox-item[data-task="ask-1"]').waitFor({ state: 'detached' });
        assert.equal(await items.count(), 1);
        const answered = (await http(api, 'GET', '/tasks/ask-1/requests')).body.requests[0];
        assert.deepEqual([answered.status, answered.answered.answer], ['answered', 'hold']);
        assert.deepEqual(
          ((await http(api, 'GET', '/requests')).body.requests as Array<{ taskId: string }>).map((r) => r.taskId),
          ['ask-2'],
        );

        // Cancel, from the page.
        await page.goto(`${api.url}/#to-cancel`);
        await page.locator('#cancel').click();
        await page.locator('g.state.current[data-state="cancelled"]').waitFor();
        await page.locator('#cancel-result', { hasText: /^cancelled: the Task is cancelled$/ }).waitFor();
        assert.equal(await page.locator('#cancel').count(), 0, 'a cancelled Task offers no cancel');
        assert.equal((await http(api, 'GET', '/tasks/to-cancel')).body.state, 'cancelled');
        assert.notEqual(await page.title(), 'owned');
      } finally {
        await context?.close();
        assert.equal((await serve.stop()).code, 0, serve.stderr());
      }
    },
  );
});
