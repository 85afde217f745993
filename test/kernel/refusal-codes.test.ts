import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { HOST_ERROR_CODES } from '../../kernel/errors.js';
import type { HarnessConfig } from '../../frontier/harness-config.js';
import { manualClock } from '../../kernel/clock.js';
import { openHost } from '../../host/host.js';
import { createSupervisor } from '../../kernel/supervisor.js';
import { taskRuns } from '../../views/task-runs.js';
import type { JobRecord } from '../../runtime/index.js';
import { parseShowView } from '../../cli/service/show-view.js';
import {
  ARTIFACT_REFUSAL_CODES,
  TaskEvent,
  REJECTION_REASONS,
  StoredArtifactRefusal,
  VerificationCause,
} from '../../machines/index.js';
import { OBJECT_KINDS, type TaskSpecInput } from '../../objects/index.js';
import { ACCEPT_X2, branchAgents } from '../support/branch-agent.js';
import { EventStore, sha256 } from '../../store/index.js';
import {
  ledgerAdapter,
  ledgerEffectAdapter,
  setLedgerFault,
  startLedger,
} from '../../workloads/round1-v1/ledger/index.js';
import { DECISION_HARNESSES, decisionSpec, decisionWorld } from '../support/decision-task.js';
import { HOUR, operatorRequest } from '../support/decision-requests.js';
import { EFFECT_HARNESSES, MAINTENANCE, effectSpec } from '../support/effect-task.js';
import { observedAdapter, startObservedProvider } from '../support/observed-provider.js';
import { OBSERVED_HARNESSES, observedSpec } from '../support/observed-task.js';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';
import { losingResponses } from '../../workloads/demo/lost-response.js';
import { DOCUMENTED_CODES } from '../reliability/documented-codes.js';
import { ordivon as ordivonIn, runFixture } from '../cli/run-fixture.js';

const CLI = fileURLToPath(new URL('../../cli/ordivon.js', import.meta.url));
const settled = ['completed', 'waiting'];
const Report = z.object({ status: z.literal('fixed') });

/** A real provider process behind the `command` driver, writing what its mode says in the workspace. */
const AGENT = `
const fs = require('fs');
const mode = process.argv[1];
const pid = String(process.pid);
if (mode === 'bad') {
  fs.writeFileSync('findings.json', JSON.stringify({ note: pid }));
  fs.writeFileSync('notes.md', 'no heading ' + pid);
  fs.writeFileSync('blob.bin', 'more than eight bytes ' + pid);
  fs.writeFileSync('report.json', JSON.stringify({ status: 'open', pid }));
  fs.writeFileSync('big.json', Buffer.alloc((1 << 20) + 1, 32));
  fs.symlinkSync('/etc/hostname', 'link.json');
  fs.mkdirSync('d');
  fs.symlinkSync('d', 'dir.json');
  fs.symlinkSync('nowhere.json', 'dangling.json');
  fs.writeFileSync('target.txt', pid);
  fs.symlinkSync('target.txt', 'alias.json');
  fs.writeFileSync('hardsrc.txt', pid);
  fs.linkSync('hardsrc.txt', 'hard.json');
} else if (mode === 'late') {
  fs.writeFileSync('late.json', JSON.stringify({ pid }));
  fs.writeFileSync('gone.json', JSON.stringify({ pid }));
} else if (mode === 'report') {
  fs.writeFileSync('report.json', JSON.stringify({ status: 'fixed', pid }));
} else if (mode === 'cheat') {
  fs.writeFileSync('check.test.js', 'process.exit(0);\\n');
  fs.writeFileSync('report.md', '# Done\\n' + pid);
} else if (mode === 'delete') {
  fs.rmSync('check.test.js');
  fs.writeFileSync('report.md', '# Done\\n' + pid);
} else if (mode === 'unfixed') {
  fs.writeFileSync('report.md', '# Done\\n' + pid);
}`;

const agent = (mode: string): HarnessConfig => ({
  driver: 'command',
  command: process.execPath,
  args: ['-e', AGENT, mode],
  timeoutMs: 30_000,
});

const CONTRACTS_SPEC: TaskSpecInput = {
  title: 'Deliver ten artifacts',
  goal: 'Write each artifact as its contract says.',
  requiredArtifacts: [
    {
      name: 'findings.json',
      schema: { type: 'object', required: ['cause'], properties: { cause: { type: 'string' } } },
    },
    { name: 'notes.md', kind: 'text', pattern: '^# ' },
    { name: 'blob.bin', kind: 'file', maxBytes: 8 },
    { name: 'report.json', schema: 'report' },
    { name: 'big.json', kind: 'file' },
    { name: 'link.json', kind: 'file' },
    { name: 'dir.json', kind: 'file' },
    { name: 'dangling.json', kind: 'file' },
    { name: 'alias.json', kind: 'file' },
    { name: 'hard.json', kind: 'file' },
  ],
  stages: [
    {
      name: 'deliver',
      produces: [
        'findings.json',
        'notes.md',
        'blob.bin',
        'report.json',
        'big.json',
        'link.json',
        'dir.json',
        'dangling.json',
        'alias.json',
        'hard.json',
      ],
      proposesCompletion: true,
    },
  ],
};

const LATE_SPEC: TaskSpecInput = {
  title: 'Deliver two artifacts',
  goal: 'Write late.json and gone.json.',
  requiredArtifacts: [
    { name: 'late.json', kind: 'file' },
    { name: 'gone.json', kind: 'file' },
  ],
  stages: [{ name: 'deliver', produces: ['late.json', 'gone.json'], proposesCompletion: true }],
};

/**
 * Codes the Host could store that no Task can reach, each with the reason. A code listed here is
 * checked to be unreachable; any other storable code must be stored by a Task of this file.
 */
const UNREACHABLE: Record<string, string> = {
  // A run.observe reads each artifact by its spec name, and a spec naming one outside is invalid_spec.
  path_escape: 'an artifact name with `..` or a leading `/` is refused invalid_spec at createTask',
};

const CHECK =
  "const { x } = require('./a.js');\nif (x !== 2) { console.error('expected x to be 2, got ' + x); process.exit(1); }\n";

function verificationSpec(): TaskSpecInput {
  const seed = join(tempDir(), 'seed');
  mkdirSync(seed);
  writeFileSync(join(seed, 'a.js'), 'module.exports = { x: 1 };\n');
  writeFileSync(join(seed, 'check.test.js'), CHECK);
  return {
    title: 'Make x 2',
    goal: 'a.js exports x; make it 2.',
    workspaceSeed: seed,
    requiredArtifacts: [{ name: 'report.md', kind: 'text', pattern: '^# ' }],
    stages: [{ name: 'fix', produces: ['report.md'], proposesCompletion: true }],
    acceptance: {
      command: process.execPath,
      args: ['check.test.js'],
      frozenTests: ['check.test.js'],
      timeoutMs: 30_000,
    },
  };
}

interface Stored {
  type: string;
  code: string | undefined;
  data: Record<string, unknown>;
}

/** A Task's journal as the store holds it, read after its Host stopped (closed before `ordivon show` opens the root). */
async function journal(state: string, taskId: string): Promise<Stored[]> {
  const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
  try {
    return [...store.stream(taskId)].map(({ event }) => ({
      type: event.type,
      code: event.disposition.admitted ? undefined : event.disposition.code,
      data: event.data as Record<string, unknown>,
    }));
  } finally {
    await store.close();
  }
}

/**
 * Every refusal code a journal stores: each retained event's disposition code, each code of a
 * `run.observe`'s `refused` map, each code a verification's cause names, and the adapter's code
 * an `effect.fail` records.
 */
function storedCodes(events: Stored[]): string[] {
  const codes: string[] = [];
  for (const e of events) {
    if (e.code !== undefined) codes.push(e.code);
    if (e.type === 'run.observe')
      for (const r of Object.values(z.record(z.string(), StoredArtifactRefusal).parse(e.data['refused'] ?? {})))
        codes.push(r.code);
    if (e.type === 'verification.record')
      for (const c of z.array(VerificationCause).parse(e.data['causes'] ?? []))
        if (c.kind === 'frozen' && c.code) codes.push(c.code);
    if (e.type === 'effect.fail') codes.push(z.string().parse(e.data['code']));
  }
  return codes;
}

function ordivon(...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Contract failures of each kind, missing artifacts and the retained rejections a send can provoke. */
async function contractsTask(): Promise<{ state: string; taskId: string }> {
  const state = tempDir();
  const harnesses = { bad: agent('bad'), report: agent('report') };
  const first = await openHost({ state, harnesses, artifactContracts: { report: Report } });
  const sup = first.supervisor;
  let taskId: string;
  try {
    ({ taskId } = await sup.createTask(CONTRACTS_SPEC));
    await sup.send(taskId, { type: 'assignment.commit', harness: 'bad', stage: 'deliver' });
    assert.equal(await sup.waitFor(taskId, settled), 'waiting');
    const sent = [
      await sup.send(taskId, { type: 'assignment.commit', harness: 'nobody', stage: 'deliver' }),
      await sup.send(taskId, { type: 'decision.submit', contextDigest: `sha256:${'a'.repeat(64)}`, candidateId: 'x' }),
      await sup.send(taskId, { type: 'request.answer', requestId: 'no-such-request', answer: 'yes' }),
    ];
    assert.deepEqual(
      sent.map((r) => [r.written, r.code]),
      [
        [true, 'harness_unknown'],
        [true, 'context_mismatch'],
        [true, 'decision_unknown'],
      ],
    );
  } finally {
    await first.stop();
  }
  // The same Task under a Host that registers no `report` contract: its artifact names nothing known.
  const second = await openHost({ state, harnesses });
  try {
    await second.supervisor.send(taskId, { type: 'assignment.commit', harness: 'report', stage: 'deliver' });
    assert.equal(await second.supervisor.waitFor(taskId, settled), 'waiting');
    const late = await second.supervisor.send(taskId, { type: 'completion.propose', generation: 1 });
    assert.deepEqual([late.written, late.code], [true, 'stale_assignment']);
  } finally {
    await second.stop();
  }
  return { state, taskId };
}

/** A frozen test rewritten by the agent (after a Goal revised mid-run), a command that exits 1, a frozen test deleted. */
async function verificationTasks(): Promise<{ state: string; cheated: string; unfixed: string; deleted: string }> {
  const state = tempDir();
  const harnesses = { cheat: agent('cheat'), unfixed: agent('unfixed'), delete: agent('delete') };
  const host = await openHost({ state, harnesses });
  const sup = host.supervisor;
  try {
    const { taskId: cheated } = await sup.createTask(verificationSpec());
    let revised = false;
    const stop = sup.subscribe((c) => {
      if (c.taskId !== cheated || c.type !== 'context.compile' || revised) return;
      revised = true;
      void sup.send(cheated, { type: 'goal.revise', goal: 'a.js exports x; make it 2, and keep the test.' });
    });
    await sup.send(cheated, { type: 'assignment.commit', harness: 'cheat', stage: 'fix' });
    assert.equal(await sup.waitFor(cheated, settled), 'waiting');
    stop();
    const { taskId: unfixed } = await sup.createTask(verificationSpec());
    await sup.send(unfixed, { type: 'assignment.commit', harness: 'unfixed', stage: 'fix' });
    assert.equal(await sup.waitFor(unfixed, settled), 'waiting');
    const { taskId: deleted } = await sup.createTask(verificationSpec());
    await sup.send(deleted, { type: 'assignment.commit', harness: 'delete', stage: 'fix' });
    assert.equal(await sup.waitFor(deleted, settled), 'waiting');
    return { state, cheated, unfixed, deleted };
  } finally {
    await host.stop();
  }
}

/**
 * A decision stage's refusals: an invented candidate, untrusted support, a failing action, a second
 * decision; then an operator's answer after the trusted policy its request is bound to moved.
 */
async function decisionTask(): Promise<{ state: string; taskId: string }> {
  const state = tempDir();
  const host = await openHost({ state, harnesses: DECISION_HARNESSES });
  const sup = host.supervisor;
  const dirs = decisionWorld();
  try {
    const { taskId } = await sup.createTask(decisionSpec(dirs));
    await sup.send(taskId, { type: 'assignment.commit', harness: 'surveyor', stage: 'survey' });
    assert.equal(await sup.waitFor(taskId, ['waiting']), 'waiting');
    for (const harness of ['pick-invented', 'pick-strip-checks', 'pick-broken-tool']) {
      await sup.send(taskId, { type: 'assignment.commit', harness, stage: 'choose' });
      assert.equal(await sup.waitFor(taskId, settled), 'waiting', harness);
    }
    const current = sup.getTask(taskId)!.context.contextDigest!;
    const again = await sup.send(taskId, { type: 'decision.submit', contextDigest: current, candidateId: 'upgrade' });
    assert.equal(again.code, 'superseded');
    assert.equal(await sup.openRequest(taskId, operatorRequest('bound')), true);
    renameSync(join(dirs.world, 'POLICY.md'), join(dirs.world, 'POLICY.old.md'));
    const stale = await sup.send(taskId, { type: 'request.answer', requestId: 'bound', answer: 'ship' });
    assert.deepEqual([stale.written, stale.code], [true, 'decision_stale']);
    return { state, taskId };
  } finally {
    await host.stop();
  }
}

/** Parallel Attempts none of which is verified: the join is retained, refused join_unsatisfied. */
async function branchTask(): Promise<{ state: string; taskId: string }> {
  const agents = branchAgents(tempDir());
  const state = join(agents.dir, 'state');
  const host = await openHost({ state, harnesses: agents.harnesses() as Record<string, HarnessConfig> });
  try {
    const sup = host.supervisor;
    const { taskId } = await sup.createTask({
      title: 'Make x equal 2',
      goal: 'Make x 2 and report.',
      requiredArtifacts: [{ name: 'report.md', kind: 'text' }],
      stages: [{ name: 'fix', produces: ['report.md'], proposesCompletion: true, parallel: ['wrong', 'right'] }],
      workspaceSeed: agents.seed,
      acceptance: ACCEPT_X2,
    });
    await sup.send(taskId, { type: 'assignment.commit', harness: 'wrong+wrong', stage: 'fix' });
    assert.equal(await sup.waitFor(taskId, ['waiting']), 'waiting');
    return { state, taskId };
  } finally {
    await host.stop();
  }
}

/** A DecisionRequest's answers refused each way a bare supervisor can refuse them (its clock a manual one). */
async function requestsTask(): Promise<{ state: string; taskId: string }> {
  const state = tempDir();
  const clock = manualClock();
  const sup = createSupervisor({ state, clock });
  await sup.start();
  try {
    const { taskId } = await sup.createTask(SPEC);
    const answer = (requestId: string, value: string) =>
      sup.send(taskId, { type: 'request.answer', requestId, answer: value }).then((r) => r.code ?? 'admitted');
    await sup.openRequest(taskId, operatorRequest('once'));
    await sup.openRequest(taskId, operatorRequest('timed', HOUR));
    await sup.openRequest(taskId, operatorRequest('revoked'));
    const codes = [await answer('once', 'maybe'), await answer('once', 'ship'), await answer('once', 'hold')];
    clock.advance(HOUR, { fire: false });
    codes.push(await answer('timed', 'ship'));
    // A new Assignment generation revokes what the previous one (here: none) asked.
    await sup.send(taskId, { type: 'assignment.commit', harness: 'codex', purpose: 'diagnose' });
    codes.push(await answer('revoked', 'ship'));
    assert.deepEqual(codes, [
      'answer_not_allowed',
      'admitted',
      'decision_not_pending',
      'decision_expired',
      'decision_revoked',
    ]);
    return { state, taskId };
  } finally {
    await sup.stop();
  }
}

/**
 * Artifacts changed while no Host served: the run's response is lost, the supervisor stops, the
 * run ends; one artifact is rewritten and one deleted; a fresh Host finds the run and observes it.
 */
async function lateEditTask(): Promise<{ state: string; taskId: string }> {
  const state = tempDir();
  const harnesses = { late: agent('late') };
  const first = await openHost({
    state,
    harnesses,
    wrapRuntime: (runtime) => losingResponses(runtime, ({ run }) => run.kind === 'harness'),
  });
  const sup = first.supervisor;
  let taskId: string;
  let job: JobRecord;
  try {
    ({ taskId } = await sup.createTask(LATE_SPEC));
    const stopped = new Promise<void>((resolve, reject) => {
      const unsubscribe = sup.subscribe((committed) => {
        if (committed.taskId !== taskId || committed.state !== 'assigned.unknown') return;
        unsubscribe();
        sup.stop().then(resolve, reject);
      });
    });
    await sup.send(taskId, { type: 'assignment.commit', harness: 'late', stage: 'deliver' });
    await stopped;
    const [found] = await first.runtime.findJobs({ clientRequestId: `${taskId}/a1/g1/run` });
    job = await first.runtime.observe(found!.jobId);
    assert.equal(job.state, 'succeeded', 'the run ends with no Host observing it');
  } finally {
    await first.stop({ jobs: 'finish' });
  }
  writeFileSync(join(job.workspace, 'late.json'), JSON.stringify({ edited: true }));
  rmSync(join(job.workspace, 'gone.json'));
  const second = await openHost({ state, harnesses });
  try {
    assert.equal(await second.supervisor.waitFor(taskId, settled), 'waiting');
  } finally {
    await second.stop();
  }
  return { state, taskId };
}

/**
 * Effects through the Round 1 ledger: an adapter refusal (a target too long for the ledger, never
 * sent), a decision to classify an unknown Effect failed, and a lookup finding three receipts.
 */
async function effectsTasks(): Promise<{ state: string; taskIds: string[] }> {
  const ledger = await startLedger({ db: join(tempDir('ordivon-ledger-'), 'ledger.db') });
  const state = tempDir();
  try {
    const host = await openHost({
      state,
      harnesses: EFFECT_HARNESSES,
      effectAdapters: { ledger: ledgerEffectAdapter(ledger.url) },
    });
    const sup = host.supervisor;
    const choose = (taskId: string, candidate: string) =>
      sup.send(taskId, { type: 'assignment.commit', harness: `pick-${candidate}`, stage: 'choose' });
    try {
      const { taskId: failed } = await sup.createTask(effectSpec());
      await choose(failed, 'oversized');
      assert.equal(await sup.waitFor(failed, ['waiting']), 'waiting');

      // The ledger commits the Host's perform and drops its answer: the Effect is unknown.
      await setLedgerFault(ledger.url, 'commit-then-drop', 1);
      const { taskId: unknown } = await sup.createTask(effectSpec());
      await choose(unknown, 'maintain-later');
      assert.equal(await sup.waitFor(unknown, ['waiting']), 'waiting');
      await choose(unknown, 'classify-failed');
      assert.equal(await sup.waitFor(unknown, ['waiting']), 'waiting');

      // Two receipts seeded under the request id the Host will use, then its own committed and dropped.
      const conflict = `refusal-conflict-${randomUUID()}`;
      const seed = ledgerAdapter(ledger.url);
      await seed.perform(`${conflict}/a1/g1/effect`, MAINTENANCE);
      await seed.perform(`${conflict}/a1/g1/effect`, MAINTENANCE);
      await setLedgerFault(ledger.url, 'commit-then-drop', 1);
      await sup.createTask(effectSpec(conflict));
      await choose(conflict, 'maintain');
      assert.equal(await sup.waitFor(conflict, ['blocked'], []), 'blocked');
      return { state, taskIds: [failed, unknown, conflict] };
    } finally {
      await host.stop();
    }
  } finally {
    await ledger.stop();
  }
}

/** An Effect refused before its intent: the provider's endpoint identity changed after the decision was admitted. */
async function endpointChangedTask(): Promise<{ state: string; taskId: string }> {
  const provider = await startObservedProvider();
  const state = tempDir();
  try {
    const host = await openHost({
      state,
      harnesses: OBSERVED_HARNESSES,
      effectAdapters: {
        provider: observedAdapter(provider.url),
        'provider-plain': observedAdapter(provider.url, { lookup: 'none' }),
      },
    });
    try {
      // Two target reads at compile, one at the decision's admission; the re-check before the intent sees the change.
      provider.fault({ afterReads: 3, change: 'identity' });
      const { taskId } = await host.supervisor.createTask(observedSpec());
      await host.supervisor.send(taskId, { type: 'assignment.commit', harness: 'pick-charge', stage: 'choose' });
      assert.equal(await host.supervisor.waitFor(taskId, ['waiting']), 'waiting');
      assert.deepEqual(provider.performs, []);
      return { state, taskId };
    } finally {
      await host.stop();
    }
  } finally {
    await provider.stop();
  }
}

describe('stored refusal codes are data, each a row of docs/errors.md', { timeout: 300_000 }, () => {
  it('every code the statechart can retain, every artifact refusal code and every Host code is a row of the table', () => {
    for (const code of [...REJECTION_REASONS, ...ARTIFACT_REFUSAL_CODES, ...HOST_ERROR_CODES])
      assert.ok(DOCUMENTED_CODES.has(code), `${code} is not in docs/errors.md`);
  });

  it('path_escape cannot be stored for an artifact: a spec naming one outside the workspace is refused invalid_spec', async () => {
    assert.deepEqual(Object.keys(UNREACHABLE), ['path_escape']);
    const state = tempDir();
    const sup = createSupervisor({ state });
    await sup.start();
    try {
      for (const name of ['../outside.json', '/etc/outside.json', 'a/../../outside.json']) {
        const spec: TaskSpecInput = {
          title: 'Escape',
          goal: 'Write outside the workspace.',
          requiredArtifacts: [{ name, kind: 'file' }],
          stages: [{ name: 'deliver', produces: [name], proposesCompletion: true }],
        };
        await assert.rejects(sup.createTask(spec), { code: 'invalid_spec' }, name);
      }
    } finally {
      await sup.stop();
    }
  });

  it('real Tasks store each refusal as {code, detail} with a documented code, and every code the statechart or an artifact read can store is stored by one: contract and read failures, artifacts changed after the run, failed verifications, Effects and retained rejections', async () => {
    const contracts = await contractsTask();
    const verification = await verificationTasks();
    const decision = await decisionTask();
    const requests = await requestsTask();
    const late = await lateEditTask();
    const effects = await effectsTasks();
    const endpoint = await endpointChangedTask();
    const branch = await branchTask();

    const contractEvents = await journal(contracts.state, contracts.taskId);
    const observed = contractEvents.filter((e) => e.type === 'run.observe' && e.code === undefined);
    const refusedOf = (e: Stored) =>
      Object.fromEntries(
        Object.entries(z.record(z.string(), StoredArtifactRefusal).parse(e.data['refused'])).map(([n, r]) => [
          n,
          r.code,
        ]),
      );
    assert.deepEqual(refusedOf(observed[0]!), {
      'findings.json': 'artifact_invalid',
      'notes.md': 'artifact_invalid',
      'blob.bin': 'artifact_invalid',
      'report.json': 'artifact_invalid',
      'big.json': 'artifact_too_large',
      'link.json': 'symlink_escape',
      'dir.json': 'not_a_file',
      'dangling.json': 'artifact_unreadable',
      // The Runtime digests a symlink's target path; the read follows it to the file's bytes.
      'alias.json': 'artifact_changed',
      // A second name for the same file: the agent could change it through either after the digest.
      'hard.json': 'artifact_hardlink',
    });
    assert.deepEqual(
      observed[0]!.data['refused'] && (observed[0]!.data['refused'] as Record<string, unknown>)['notes.md'],
      {
        code: 'artifact_invalid',
        detail: 'text: does not match /^# /',
      },
    );
    assert.deepEqual(refusedOf(observed[1]!), { 'report.json': 'contract_unknown' });

    const lateEvents = await journal(late.state, late.taskId);
    const lateObserved = lateEvents.filter((e) => e.type === 'run.observe');
    assert.equal(lateObserved.length, 1);
    assert.deepEqual(refusedOf(lateObserved[0]!), { 'late.json': 'artifact_changed', 'gone.json': 'artifact_missing' });
    const lateRefused = z.record(z.string(), StoredArtifactRefusal).parse(lateObserved[0]!.data['refused']);
    // The detail names the bytes found now and the digest the Runtime took when the run ended.
    assert.match(
      lateRefused['late.json']!.detail,
      new RegExp(`^${sha256(JSON.stringify({ edited: true }))} now; the run ended with sha256:[0-9a-f]{64}$`),
    );
    assert.match(lateRefused['gone.json']!.detail, /^gone\.json does not exist$/);

    const cheated = await journal(verification.state, verification.cheated);
    const unfixed = await journal(verification.state, verification.unfixed);
    const causesOf = (events: Stored[]) =>
      z.array(VerificationCause).parse(events.find((e) => e.code === 'verification_failed')!.data['causes']);
    assert.deepEqual(causesOf(cheated), [
      { kind: 'frozen', path: 'check.test.js', bound: sha256(CHECK), current: sha256('process.exit(0);\n') },
    ]);
    const [command, ...others] = causesOf(unfixed);
    assert.deepEqual(others, []);
    assert.deepEqual([command!.kind, command!.kind === 'command' && command!.exitCode], ['command', 1]);
    assert.match(command!.kind === 'command' ? command!.stderr : '', /expected x to be 2, got 1/);
    const deleted = await journal(verification.state, verification.deleted);
    assert.deepEqual(causesOf(deleted)[0], {
      kind: 'frozen',
      path: 'check.test.js',
      bound: sha256(CHECK),
      current: null,
      code: 'artifact_missing',
    });

    const decisionEvents = await journal(decision.state, decision.taskId);
    const requestEvents = await journal(requests.state, requests.taskId);
    const effectEvents = await Promise.all(effects.taskIds.map((id) => journal(effects.state, id)));
    effectEvents.push(await journal(endpoint.state, endpoint.taskId));
    effectEvents.push(await journal(branch.state, branch.taskId));
    const codes = [
      contractEvents,
      cheated,
      unfixed,
      deleted,
      decisionEvents,
      requestEvents,
      lateEvents,
      ...effectEvents,
    ].flatMap(storedCodes);
    for (const code of codes) assert.ok(DOCUMENTED_CODES.has(code), `${code} is stored but not in docs/errors.md`);
    // Each code the statechart can retain and each artifact refusal code is stored by a Task above.
    const reached = new Set(codes);
    for (const code of [...REJECTION_REASONS, ...ARTIFACT_REFUSAL_CODES])
      assert.equal(reached.has(code), !(code in UNREACHABLE), `${code}: stored ${reached.has(code)}`);
    assert.deepEqual([...reached].sort(), [
      'action_failed',
      'answer_not_allowed',
      'artifact_changed',
      'artifact_hardlink',
      'artifact_invalid',
      'artifact_missing',
      'artifact_too_large',
      'artifact_unreadable',
      'candidate_unknown',
      'context_mismatch',
      'context_stale',
      'contract_unknown',
      'decision_expired',
      'decision_not_pending',
      'decision_revoked',
      'decision_stale',
      'decision_unknown',
      'effect_endpoint_changed',
      'effect_failed',
      'effect_unknown',
      'harness_unknown',
      'identity_conflict',
      'join_unsatisfied',
      'ledger_invalid_request',
      'missing_artifact',
      'not_a_file',
      'stale_assignment',
      'superseded',
      'symlink_escape',
      'untrusted_authority',
      'verification_failed',
    ]);

    // `ordivon show` names what failed the verification, in --json and in its human form.
    const json = ordivon('show', verification.cheated, '--state', verification.state, '--json');
    assert.equal(json.status, 0, json.stderr);
    const view = JSON.parse(json.stdout) as {
      rejections: Array<{ code: string; causes?: unknown[]; detail?: string }>;
    };
    const failed = view.rejections.find((r) => r.code === 'verification_failed')!;
    assert.deepEqual(failed.causes, causesOf(cheated));
    assert.match(
      failed.detail ?? '',
      /^frozen test check\.test\.js bound sha256:[0-9a-f]{12}, now sha256:[0-9a-f]{12}$/,
    );
    const text = ordivon('show', verification.unfixed, '--state', verification.state);
    assert.equal(text.status, 0, text.stderr);
    assert.match(
      text.stdout,
      /rejected r\d+ verification\.record: verification_failed \(exit 1\)\n {4}acceptance command exited 1\n {6}stderr \(tail\):\n {8}expected x to be 2, got 1/,
    );
    const contractsText = ordivon('show', contracts.taskId, '--state', contracts.state);
    assert.match(contractsText.stdout, /refused .*notes\.md \(artifact_invalid: text: does not match \/\^# \/\)/);
    assert.match(contractsText.stdout, /link\.json \(symlink_escape: /);
    // `show --json --events` gives the map as stored: the event's data and each run's `refused`.
    const contractsJson = ordivon('show', contracts.taskId, '--state', contracts.state, '--json', '--events');
    assert.equal(contractsJson.status, 0, contractsJson.stderr);
    const shown = JSON.parse(contractsJson.stdout) as {
      events: Array<{ type: string; data: { refused?: Record<string, { code: string; detail: string }> } }>;
      runs: Array<{ refused: Record<string, { code: string; detail: string }> }>;
    };
    const notes = { code: 'artifact_invalid', detail: 'text: does not match /^# /' };
    assert.deepEqual(shown.events.find((e) => e.type === 'run.observe')?.data.refused?.['notes.md'], notes);
    assert.deepEqual(shown.runs[0]!.refused['notes.md'], notes);
  });

  it('ordivon run exits 1 with verification_failed, its message naming the acceptance command exit', () => {
    const f = runFixture();
    // Harness b writes its report and leaves a.js as it was: the acceptance command exits 1.
    writeFileSync(
      join(f.dir, 'ordivon.config.json'),
      JSON.stringify({
        harnesses: {
          a: {
            driver: 'command',
            command: process.execPath,
            args: ['-e', "require('fs').writeFileSync('findings.json', JSON.stringify({ cause: 'x is 1' }))"],
          },
          b: {
            driver: 'command',
            command: process.execPath,
            args: ['-e', "require('fs').writeFileSync('report.md', '# Fixed\\n')"],
          },
        },
      }),
    );
    const r = ordivonIn(
      f.dir,
      'run',
      '--spec',
      'spec.json',
      '--stages',
      'investigate=a,fix=b',
      '--state',
      'state',
      '--json',
    );
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stdout, '', 'a Task not completed is an error on stderr');
    const out = r.error() as { completed: boolean; code: string; message: string };
    assert.deepEqual([out.completed, out.code], [false, 'verification_failed']);
    assert.match(out.message, /stage fix \(g2\): exit 1$/);
  });

  it('reads the prose a journal of machine version 4 stored as {code, detail}, the prose kept as the detail', () => {
    const legacy = {
      'findings.json': "invalid json-schema: cause: must have required property 'cause'",
      'notes.md': 'invalid text: does not match /^# /',
      'report.json': 'contract_unknown report: no artifact contract named report',
      'link.json': 'symlink_escape: link.json leads outside the workspace through a symlink',
      'big.json': 'artifact_too_large: big.json is 1048577 bytes; the limit is 1048576',
      'late.json': 'changed after the run ended',
    };
    const expected = {
      'findings.json': 'artifact_invalid',
      'notes.md': 'artifact_invalid',
      'report.json': 'contract_unknown',
      'link.json': 'symlink_escape',
      'big.json': 'artifact_too_large',
      'late.json': 'artifact_changed',
    };
    const D = (c: string) => `sha256:${c.repeat(64)}`;
    const data = {
      generation: 1,
      clientRequestId: 't/a1/g1/run',
      contextDigest: D('c'),
      receiptDigest: D('d'),
      jobStatus: 'succeeded',
      evidence: {},
      refused: legacy,
    };
    const parsed = TaskEvent.parse({ type: 'run.observe', revision: 6, origin: 'host', ...data });
    assert.ok(parsed.type === 'run.observe');
    const asData = (refused: Record<string, { code: string; detail: string }>) =>
      Object.fromEntries(Object.entries(refused).map(([n, r]) => [n, r.code]));
    assert.deepEqual(asData(parsed.refused!), expected);
    assert.equal(parsed.refused!['notes.md']!.detail, legacy['notes.md']);

    const receipt = {
      driver: 'command',
      runId: 't/a1/g1/run',
      provider: { name: 'command' },
      contextDigest: D('c'),
      artifacts: [],
      counts: { messages: 0, thoughts: 0, toolItemsStarted: 0, toolItemsCompleted: 0, protocolErrors: 0 },
      stopReason: 'completed',
      timings: { startedAt: '2026-01-01T00:00:00Z', endedAt: '2026-01-01T00:00:01Z', durationMs: 1000 },
    };
    const [run] = taskRuns({
      events: [{ revision: 6, type: 'run.observe', data, disposition: { admitted: true } }],
      object: () => receipt,
    });
    assert.deepEqual(asData(run!.refused), expected);
    assert.equal(run!.refused['findings.json']!.detail, legacy['findings.json']);

    // A service of machine version 4 answers the prose too: `ordivon show` through it reads the same.
    const view = parseShowView(
      {
        taskId: 't',
        revision: 6,
        state: 'waiting',
        frontier: 'none',
        title: 't',
        context: { generation: 1, assignment: null, evidence: {} },
        rejections: [],
        contexts: [],
        runs: [{ ...run!, refused: legacy }],
      },
      'service',
    );
    assert.deepEqual(asData(view.runs[0]!.refused), expected);
  });
});
