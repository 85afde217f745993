import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM_ARGS } from '../../adapters/index.js';
import { CHROMIUM } from '../support/chromium.js';
import { SPEC } from '../support/tasks.js';
import { DECISION_HARNESSES, decisionSpec, decisionWorld } from '../support/decision-task.js';
import { tempDir } from '../support/temp.js';
import { ACCEPT_X2, branchAgents } from '../support/branch-agent.js';
import { until } from '../support/until.js';
import { http, startServe, type Ready, type ServeChild } from './serve-child.js';

const ARTIFACTS = fileURLToPath(new URL('../../../test-artifacts/', import.meta.url));

/** Runs `fn` with a headless Chromium beside the service `serve`, then closes both (the service must exit 0). */
async function inChromium(
  dir: string,
  serve: ServeChild,
  fn: (context: BrowserContext) => Promise<void>,
): Promise<void> {
  let context: BrowserContext | undefined;
  try {
    // Inside the try: if Chromium cannot start, the service is still stopped and the test fails
    // at once instead of hanging on its child.
    context = await chromium.launchPersistentContext(join(dir, 'profile'), {
      executablePath: CHROMIUM.need(),
      headless: true,
      args: [...CHROMIUM_ARGS],
    });
    await fn(context);
  } finally {
    await context?.close();
    const stopped = await serve.stop();
    assert.equal(stopped.code, 0, `serve ended with ${stopped.signal ?? stopped.code}:\n${serve.stderr()}`);
  }
}

/** The service page open at `taskId`, logged in; each URL it requests is pushed to `requests`. */
async function taskPage(context: BrowserContext, api: Ready, taskId: string, requests: string[] = []): Promise<Page> {
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('request', (r) => requests.push(r.url()));
  await page.setViewportSize({ width: 1400, height: 1000 });
  // The one-time login URL serve printed sets the session cookie the page's requests carry.
  await page.goto(api.login!);
  await page.goto(`${api.url}/#${taskId}`);
  return page;
}

describe('the service page in headless Chromium', { timeout: 90_000 }, () => {
  it(
    "shows a Task's current state highlighted and follows an event sent through the API",
    { skip: CHROMIUM.skip },
    async () => {
      const dir = tempDir();
      const serve = await startServe(['--state', join(dir, 'state'), '--port', '0', '--no-harnesses']);
      await inChromium(dir, serve, async (context) => {
        const api = serve.ready;
        assert.equal((await http(api, 'POST', '/tasks', { body: { ...SPEC, taskId: 'page-1' } })).status, 201);
        assert.equal(
          (
            await http(api, 'POST', '/tasks/page-1/events', {
              body: { type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' },
            })
          ).status,
          200,
        );
        assert.equal(
          (
            await http(api, 'POST', '/tasks/page-1/events', {
              body: { type: 'assignment.commit', harness: 'hermes', purpose: 'repair' },
            })
          ).status,
          200,
        );

        const requests: string[] = [];
        const page = await taskPage(context, api, 'page-1', requests);

        await page.locator('g.state.current[data-state="assigned.compiling"]').waitFor();
        assert.equal(await page.locator('#state').textContent(), 'assigned.compiling');
        assert.equal(await page.locator('g.state.current').count(), 1, 'exactly one state is the current one');
        assert.equal(
          await page.locator('g.state.active[data-state="assigned"]').count(),
          1,
          'its parent is marked active',
        );
        assert.equal(await page.locator('#events tr').count(), 4, 'header + 3 events');
        await page.locator('#live.on').waitFor();

        // A stale proposal (generation 1 after generation 2 was committed) is retained with its code.
        const stale = await http(api, 'POST', '/tasks/page-1/events', {
          body: { type: 'completion.propose', generation: 1, proposer: 'codex' },
        });
        assert.deepEqual([stale.status, stale.body.written, stale.body.code], [200, true, 'stale_assignment']);
        await page.locator('#rejections tr.rejected', { hasText: 'stale_assignment' }).waitFor();

        const cancelled = await http(api, 'POST', '/tasks/page-1/events', {
          body: { type: 'task.cancel', reason: 'seen in the browser test' },
        });
        assert.equal(cancelled.body.state, 'cancelled');
        await page.locator('g.state.current[data-state="cancelled"]').waitFor();
        assert.equal(await page.locator('#state').textContent(), 'cancelled');
        assert.equal(await page.locator('g.state.current[data-state="assigned.compiling"]').count(), 0);
        assert.match((await page.locator('#events').textContent()) ?? '', /task\.cancel/);

        mkdirSync(ARTIFACTS, { recursive: true });
        await page.screenshot({ path: join(ARTIFACTS, 'service-page.png'), fullPage: true });
        const foreign = requests.filter((u) => !u.startsWith(`${api.url}/`));
        assert.deepEqual(foreign, [], 'the page requests nothing but the service');
      });
    },
  );
  it(
    "lists each Context's items with trust and claim, its candidates, and a refusal with the sources that caused it",
    { skip: CHROMIUM.skip },
    async () => {
      // Real provider processes behind the command driver, choosing what the test's harness names.
      const dir = tempDir();
      writeFileSync(join(dir, 'ordivon.config.json'), JSON.stringify({ harnesses: DECISION_HARNESSES }));
      const serve = await startServe(
        ['--state', join(dir, 'state'), '--port', '0', '--config', 'ordivon.config.json'],
        {},
        { cwd: dir },
      );
      await inChromium(dir, serve, async (context) => {
        const api = serve.ready;
        const spec = { ...decisionSpec(decisionWorld()), taskId: 'page-2' };
        assert.equal((await http(api, 'POST', '/tasks', { body: spec })).status, 201);
        const page = await taskPage(context, api, 'page-2');
        const send = (body: object) => http(api, 'POST', '/tasks/page-2/events', { body });
        const cells = async (row: string) => (await page.locator(row).locator('td').allTextContents()).slice(0, 3);

        assert.equal((await send({ type: 'assignment.commit', harness: 'surveyor', stage: 'survey' })).status, 200);
        const first = '#contexts table.context[data-generation="1"]';
        await page.locator(`${first} tr.item[data-source="notes"]`).waitFor();
        assert.match(
          (await page.locator(`${first} caption`).textContent()) ?? '',
          /^context r3 g1 survey [0-9a-f]{16} · goal revision 1$/,
        );
        assert.deepEqual(await cells(`${first} tr.item[data-source="policy"]`), ['policy', 'trusted', 'asserted']);
        assert.deepEqual(await cells(`${first} tr.item[data-source="notes"]`), ['notes', 'untrusted', 'unverified']);

        await page.locator('g.state.current[data-state="waiting"]').waitFor();
        const choose = await send({ type: 'assignment.commit', harness: 'pick-strip-checks', stage: 'choose' });
        assert.equal(choose.status, 200);
        const refused = page.locator('#rejections tr.rejected', { hasText: 'untrusted_authority' });
        await refused.waitFor();
        assert.equal(
          await refused.locator('td.causes').textContent(),
          'candidate strip-checks supported by notes (untrusted)',
        );
        const second = '#contexts table.context[data-generation="2"]';
        assert.deepEqual(await cells(`${second} tr.candidate[data-candidate="strip-checks"]`), [
          'candidate strip-checks',
          'untrusted',
          'supported by notes (untrusted)',
        ]);
        assert.deepEqual(await cells(`${second} tr.candidate[data-candidate="upgrade"]`), [
          'candidate upgrade',
          'trusted',
          'supported by policy (trusted), tools (trusted)',
        ]);
        assert.deepEqual(await cells(`${second} tr.item[data-source="evidence:survey.md"]`), [
          'evidence:survey.md',
          'untrusted',
          'unverified',
        ]);
        mkdirSync(ARTIFACTS, { recursive: true });
        await page.screenshot({ path: join(ARTIFACTS, 'service-page-contexts.png'), fullPage: true });
      });
    },
  );

  it(
    "draws a branch's tree: each child with its state, generation, verification and why it won or lost",
    { skip: CHROMIUM.skip },
    async () => {
      const agents = branchAgents(tempDir());
      const config = join(agents.dir, 'ordivon.config.json');
      writeFileSync(config, JSON.stringify({ harnesses: agents.harnesses() }));
      const serve = await startServe(['--state', join(agents.dir, 'state'), '--port', '0', '--config', config]);
      await inChromium(agents.dir, serve, async (context) => {
        const api = serve.ready;
        const spec = {
          taskId: 'tree',
          title: 'Make x equal 2',
          goal: 'Make x 2 and report.',
          requiredArtifacts: [{ name: 'report.md', kind: 'text' }],
          stages: [{ name: 'fix', produces: ['report.md'], proposesCompletion: true }],
          workspaceSeed: agents.seed,
          acceptance: ACCEPT_X2,
        };
        assert.equal((await http(api, 'POST', '/tasks', { body: spec })).status, 201);
        const body = { type: 'assignment.commit', harness: 'wrong+gated', stage: 'fix' };
        assert.equal((await http(api, 'POST', '/tasks/tree/events', { body })).status, 200);
        // The right fix waits at its gate until the wrong one has ended: the order is the test's.
        await until('the wrong Attempt ended', 60_000, async () => {
          const wrong = await http(api, 'GET', '/tasks/tree.g1.1-wrong');
          return (wrong.body as { state?: string }).state === 'waiting' ? true : undefined;
        });
        await agents.open();
        const page = await taskPage(context, api, 'tree');
        await page.locator('#state', { hasText: 'completed' }).waitFor();
        await page.locator('#branch-head', { hasText: 'joined: tree.g1.2-gated' }).waitFor();
        const won = page.locator('#branch tr[data-outcome="won"]');
        assert.match((await won.textContent()) ?? '', /tree\.g1\.2-gatedgatedcompleted1verifiedwon/);
        const lost = page.locator('#branch tr[data-outcome="lost"]');
        assert.match(
          (await lost.textContent()) ?? '',
          /tree\.g1\.1-wrongwrongwaiting1unverifiedlostended waiting: verification_failed/,
        );
      });
    },
  );
});
