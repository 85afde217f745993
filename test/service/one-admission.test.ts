import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openHost, type HostOptions } from '../../host/host.js';
import { createSupervisor, type Supervisor, type SupervisorOptions } from '../../kernel/supervisor.js';
import { sha256 } from '../../store/index.js';
import {
  DECISION_HARNESSES,
  POLICY_1,
  POLICY_2,
  agent,
  decisionSpec,
  decisionWorld,
} from '../support/decision-task.js';
import { decideCli, operatorRequest, ordivon, serveInProcess } from '../support/decision-requests.js';
import { createDatabase, postgresPart, sharedPostgres } from '../support/postgres.js';
import { tempDir } from '../support/temp.js';
import { http, startServe, type Target } from './serve-child.js';

/**
 * Issue 30 item 7: the read set of a DecisionRequest is re-validated by the kernel, so the same
 * stale answer is refused the same way by every entry that admits it, with or without harnesses.
 */

/** How a refusal names a moved source (machines/task-machine.ts `describeStale`: 12 hex digits of each digest). */
const short = (digest: string) => digest.slice(0, 'sha256:'.length + 12);
const MOVED = new RegExp(`policy bound ${short(sha256(POLICY_1))}, now ${short(sha256(POLICY_2))}`);

/** The entries an answer can come through, each answering its own request. */
const ENTRIES = ['bare', 'bare-api', 'no-harnesses', 'no-config', 'config', 'decide', 'send'] as const;

/** A Task waiting after its survey, a request open per entry (and `fresh`), bound to the world as it was. */
async function staleRequests(
  ids: readonly string[] = ['fresh', ...ENTRIES],
  shared: Pick<HostOptions, 'store' | 'cluster'> = {},
): Promise<{ state: string; taskId: string; world: string }> {
  const state = tempDir();
  const dirs = decisionWorld();
  const spec = decisionSpec(dirs);
  // A trusted source in the Attempt's workspace: the kernel must find the workspace openHost seeded.
  spec.sources = [...(spec.sources ?? []), { id: 'seed-notes', path: 'NOTES.md', in: 'workspace', trust: 'trusted' }];
  const host = await openHost({ state, harnesses: DECISION_HARNESSES, ...shared });
  try {
    const { taskId } = await host.supervisor.createTask(spec);
    await host.supervisor.send(taskId, { type: 'assignment.commit', harness: 'surveyor', stage: 'survey' });
    await host.supervisor.waitFor(taskId, ['waiting']);
    for (const id of ids) assert.equal(await host.supervisor.openRequest(taskId, operatorRequest(id)), true);
    return { state, taskId, world: dirs.world };
  } finally {
    await host.stop();
  }
}

const answer = (requestId: string) => ({
  type: 'request.answer' as const,
  requestId,
  answer: 'ship',
  answeredBy: 'alice',
});

/** POSTs the answer to a service and expects it refused decision_stale naming the moved policy. */
async function refusedByApi(target: Target, taskId: string, requestId: string): Promise<void> {
  const res = await http(target, 'POST', `/tasks/${taskId}/requests/${requestId}/answer`, {
    body: { answer: 'ship', answeredBy: 'alice' },
  });
  assert.equal(res.status, 409, `${requestId}: ${res.text}`);
  assert.deepEqual([res.body.admitted, res.body.written, res.body.error?.code], [false, true, 'decision_stale']);
  assert.match(res.body.error.message, MOVED, requestId);
}

/** A CLI answer's refusal, whichever stream and JSON shape carry it. */
function cliRefusal(stdout: string, stderr: string): { code: string; text: string } {
  const json = JSON.parse(stdout.trim() || stderr.trim()) as Record<string, any>;
  return json.error ? { code: json.error.code, text: json.error.message } : { code: json.code, text: json.detail };
}

/**
 * A bare supervisor on `options` admits the answer to `fresh` (the world is as bound), stops, and
 * then the policy its DecisionRequests are bound to changes.
 */
async function admitFreshThenMovePolicy(options: SupervisorOptions, taskId: string, world: string): Promise<void> {
  const sup = createSupervisor(options);
  await sup.start();
  try {
    const fresh = await sup.send(taskId, answer('fresh'));
    assert.deepEqual([fresh.admitted, fresh.code], [true, undefined], fresh.detail);
  } finally {
    await sup.stop();
  }
  writeFileSync(join(world, 'POLICY.md'), POLICY_2);
}

describe('one admission, however the Host is opened', { timeout: 300_000 }, () => {
  it('refuses the same stale answer decision_stale, naming bound and current digest, through the bare supervisor, the control API, serve with and without harnesses, decide and send', async () => {
    const { state, taskId, world } = await staleRequests();

    // The world as bound: the bare supervisor finds the workspace source where openHost put it, so nothing is stale.
    await admitFreshThenMovePolicy({ state }, taskId, world);

    let sup: Supervisor = createSupervisor({ state });
    await sup.start();
    try {
      const bare = await sup.send(taskId, answer('bare'));
      assert.deepEqual([bare.admitted, bare.written, bare.code], [false, true, 'decision_stale']);
      assert.match(bare.detail!, MOVED);
      const service = await serveInProcess(sup);
      try {
        await refusedByApi(service, taskId, 'bare-api');
      } finally {
        await service.close();
      }
    } finally {
      await sup.stop();
    }

    const config = join(tempDir(), 'ordivon.config.json');
    writeFileSync(config, JSON.stringify({ harnesses: { surveyor: agent('survey') } }));
    const serves: Array<[string, string[], { cwd?: string }]> = [
      ['no-harnesses', ['--no-harnesses'], {}],
      // No --config and no ./ordivon.config.json where it runs: the bare supervisor too.
      ['no-config', [], { cwd: tempDir() }],
      ['config', ['--config', config], {}],
    ];
    for (const [requestId, flags, options] of serves) {
      const serve = await startServe(['--state', state, '--port', '0', ...flags], {}, options);
      try {
        await refusedByApi({ url: serve.ready.url, state }, taskId, requestId);
      } finally {
        await serve.stop();
      }
    }

    const decided = await decideCli(state, taskId, 'decide', '--answer', 'ship', '--by', 'alice');
    assert.equal(decided.status, 1, decided.stderr);
    assert.deepEqual([decided.error?.code, decided.error?.written], ['decision_stale', true]);
    assert.match(decided.error?.message, MOVED);

    const sent = await ordivon('send', taskId, JSON.stringify(answer('send')), '--state', state, '--json');
    assert.equal(sent.status, 1, sent.stderr);
    const refusal = cliRefusal(sent.stdout, sent.stderr);
    assert.equal(refusal.code, 'decision_stale');
    assert.match(refusal.text, MOVED);

    // Nothing was admitted: every answer after the move is kept refused, and its request revoked.
    sup = createSupervisor({ state });
    await sup.start();
    try {
      const answers = sup
        .events(taskId)
        .filter((e) => e.type === 'request.answer')
        .map((e) => [e.data['requestId'], e.disposition.admitted ? 'admitted' : e.disposition.code]);
      assert.deepEqual(answers, [['fresh', 'admitted'], ...ENTRIES.map((id) => [id, 'decision_stale'])]);
      const requests = sup.getTask(taskId)!.context.requests;
      assert.deepEqual(
        ENTRIES.map((id) => requests[id]!.status),
        ENTRIES.map(() => 'revoked'),
      );
    } finally {
      await sup.stop();
    }
  });
});

const part = postgresPart();

describe('one admission on a shared PostgreSQL history', { skip: part.skip, timeout: 300_000 }, () => {
  const server = sharedPostgres();

  it("a bare supervisor restarted on a Host's mirror reads the workspace openHost seeded there and refuses the stale answer decision_stale", async () => {
    const url = await createDatabase(server().url, 'one_admission');
    const shared = { store: url, cluster: { hostId: 'host-a', leaseMs: 600_000 } };
    const { state, taskId, world } = await staleRequests(['fresh', 'stale'], shared);
    await admitFreshThenMovePolicy({ state, ...shared }, taskId, world);
    const sup = createSupervisor({ state, ...shared });
    await sup.start();
    try {
      const stale = await sup.send(taskId, answer('stale'));
      assert.deepEqual([stale.admitted, stale.written, stale.code], [false, true, 'decision_stale']);
      assert.match(stale.detail!, MOVED);
    } finally {
      await sup.stop();
    }
  });
});
