import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openHost } from '../../host/host.js';
import { taskRuns } from '../../views/task-runs.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { createRuntime, sourceDigest } from '../../runtime/index.js';
import { EventStore } from '../../store/index.js';
import { tempDir } from '../support/temp.js';
import {
  FINDINGS_TEXT,
  REAL_AGENTS,
  REPORT_TEXT,
  TWO_STAGE_TASK,
  fixSource,
  type StageModel,
  type RealAgent,
  type Stage,
} from './two-stage-agents.js';

// The same two-stage Task (investigate → findings.json, then fix → report.md, the result) on each
// real agent in turn, each on a fresh state root with a Host whose only harness is that agent.
// Everything asserted is read back from the state root after the Host stopped.

const ARTIFACTS = TWO_STAGE_TASK.requiredArtifacts.map((a) => a.name);
const digestOf = (text: string) => 'sha256:' + createHash('sha256').update(text).digest('hex');

/** The source digests the Host must record: the seed as it is, and the seed with the fix applied. */
async function expectedSources(): Promise<{ seed: string; fixed: string }> {
  const dir = join(tempDir('ordivon-two-stage-src-'), 'repo');
  cpSync(TWO_STAGE_TASK.workspaceSeed, dir, { recursive: true });
  const seed = await sourceDigest(dir, { exclude: ARTIFACTS });
  const file = join(dir, 'src', 'duration.js');
  writeFileSync(file, fixSource(readFileSync(file, 'utf8')));
  return { seed, fixed: await sourceDigest(dir, { exclude: ARTIFACTS }) };
}

/** A wait that, when the Task ends elsewhere, fails naming every step the Host took. */
async function settled(wait: Promise<string>, steps: string[]): Promise<void> {
  try {
    await wait;
  } catch (error) {
    throw new Error(`${(error as Error).message}; steps:\n${steps.join('\n')}`, { cause: error });
  }
}

interface Ran {
  state: string;
  taskId: string;
  /** Each dispatch's stage and its scripted model, in order. */
  models: Array<{ stage: Stage; model: StageModel }>;
}

/** Runs both stages on `agent`; returns the state root and the Task id, with the Host stopped. */
async function runTwoStages(agent: RealAgent, steps: string[]): Promise<Ran> {
  const dir = tempDir(`ordivon-two-stage-${agent.name}-`);
  const state = join(dir, 'state');
  const models: Ran['models'] = [];
  let runs = 0;
  const host = await openHost({
    state,
    harnesses: {
      [agent.name]: async ({ purpose, workspace }) => {
        const stage = purpose as Stage;
        const { config, model } = await agent.harness(stage, workspace, join(dir, `home-${++runs}`));
        models.push({ stage, model });
        return config;
      },
    },
    onStep: (_, step) => steps.push(step),
  });
  const sup = host.supervisor;
  try {
    const { taskId } = await sup.createTask(TWO_STAGE_TASK);
    const investigate = await sup.send(taskId, {
      type: 'assignment.commit',
      harness: agent.name,
      stage: 'investigate',
    });
    assert.equal(investigate.admitted, true, JSON.stringify(investigate));
    await settled(sup.waitFor(taskId, ['waiting'], ['completed', 'cancelled', 'blocked']), steps);
    assert.deepEqual(Object.keys(sup.getTask(taskId)!.context.evidence), ['findings.json'], steps.join('\n'));

    const fix = await sup.send(taskId, { type: 'assignment.commit', harness: agent.name, stage: 'fix' });
    assert.equal(fix.admitted, true, JSON.stringify(fix));
    await settled(sup.waitFor(taskId, ['completed'], ['waiting', 'cancelled', 'blocked']), steps);
    return { state, taskId, models };
  } finally {
    await host.stop();
    await Promise.all(models.map(({ model }) => model.close()));
  }
}

interface Outcome {
  evidence: Record<string, string>;
  sourceDigest: string;
  verification: string;
  result: unknown;
  resultArtifact?: string;
}

/** Reads the finished Task from its state root (store and Runtime), not from the Host that ran it. */
async function assertDurableOutcome(state: string, taskId: string, sources: { seed: string; fixed: string }) {
  const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
  const runtime = await createRuntime({ root: join(state, 'runtime'), recover: false });
  try {
    const projection = store.projection(taskId)!;
    assert.equal(projection.state, 'completed');
    const context = (projection.snapshot as { context: { outcome: { digest: string } } }).context;
    const outcome = store.getObject<Outcome>(context.outcome.digest, 'outcome').body;

    // The outcome binds both artifacts, each retained with the exact bytes the agent wrote.
    const findings = digestOf(FINDINGS_TEXT);
    const report = digestOf(REPORT_TEXT);
    assert.deepEqual(outcome.evidence, { 'findings.json': findings, 'report.md': report });
    assert.equal(store.getBlob(findings).toString('utf8'), FINDINGS_TEXT);
    assert.equal(store.getBlob(report).toString('utf8'), REPORT_TEXT);
    assert.deepEqual([outcome.resultArtifact, outcome.result], ['report.md', REPORT_TEXT]);

    // Investigating changed no source; the fix changed exactly src/duration.js, and acceptance passed on it.
    const events = [...store.stream(taskId)].map(({ revision, event }) => ({ revision, ...event }));
    const runs = taskRuns({ events, object: (digest) => store.getObject(digest, 'receipt').body });
    assert.deepEqual(
      runs.map((r) => [r.generation, r.purpose, r.jobStatus, r.confined, r.evidence, r.refused, r.sourceDigest]),
      [
        [1, 'investigate', 'succeeded', true, { 'findings.json': findings }, {}, sources.seed],
        [2, 'fix', 'succeeded', true, { 'report.md': report }, {}, sources.fixed],
      ],
    );
    assert.equal(outcome.sourceDigest, sources.fixed);
    assert.notEqual(outcome.sourceDigest, sources.seed);
    const verification = store.getObject<{ passed: boolean; frozenTestsIntact: boolean; sourceDigest: string }>(
      outcome.verification,
      'verification',
    ).body;
    assert.deepEqual(
      [verification.passed, verification.frozenTestsIntact, verification.sourceDigest],
      [true, true, sources.fixed],
    );
    // Every agent ran confined, and so did the acceptance run (docs/threat-model.md).
    const verifyJob = (await runtime.findJobs({ clientRequestId: `${taskId}/a1/g2/verify` }))[0];
    assert.equal(verifyJob?.verification?.confined, true);

    // Exactly two dispatches, one provider job each, and one acceptance run.
    assert.deepEqual(
      events.filter((e) => e.type === 'dispatch.intend').map((e) => e.data.generation),
      [1, 2],
    );
    const jobs = async (id: string) => (await runtime.findJobs({ clientRequestId: `${taskId}/a1/${id}` })).length;
    assert.deepEqual(
      [await jobs('g1/run'), await jobs('g2/run'), await jobs('g1/verify'), await jobs('g2/verify')],
      [1, 1, 0, 1],
    );
  } finally {
    await runtime.close();
    await store.close();
  }
}

describe('the same two-stage Task end to end on each real agent (offline, scripted models of their own APIs)', () => {
  const sources = expectedSources();
  for (const agent of REAL_AGENTS) {
    it(
      `${agent.name}: investigate waits with findings.json, fix completes with report.md as the result; both digests bound, the source fixed, two dispatches`,
      { skip: agent.part?.skip ?? false, timeout: 600_000 },
      async (t) => {
        agent.part?.need();
        const steps: string[] = [];
        const started = performance.now();
        const { state, taskId, models } = await runTwoStages(agent, steps);
        t.diagnostic(`${agent.name}: both stages and acceptance in ${Math.round(performance.now() - started)} ms`);
        // The agent ran the tests with its own shell tool in each stage and stayed on its script.
        assert.deepEqual(
          models.map(({ stage, model }) => [stage, model.unanswered()]),
          [
            ['investigate', []],
            ['fix', []],
          ],
        );
        const [investigate, fix] = models.map(({ model }) => model.toolOutputs().join('\n'));
        assert.match(investigate!, /not ok 3 - milliseconds[\s\S]*# fail 3/);
        assert.match(fix!, /# pass 8[\s\S]*# fail 0/);
        await assertDurableOutcome(state, taskId, await sources);
      },
    );
  }
});
