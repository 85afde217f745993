import type { Attachments } from '../kernel/index.js';
import type { HarnessRunReceipt } from '../drivers/receipt.js';
import type { EventOrigin, TaskMachineContext } from '../machines/index.js';
import { digestOf, sha256 } from '../store/index.js';
import { randomHex, seededRandom } from './util.js';

/**
 * The benchmark workload: one valid walk through the Task statechart per Task, shaped like the
 * Host's own traffic (Assignments, compiled Contexts, dispatch intents and acknowledgements, run
 * observations with artifact evidence, proposals, verification), with about 2% stale-generation
 * proposals (retained `stale_assignment`), some `missing_artifact` proposals, an occasional lost
 * dispatch reconciled by its job, and about 80% of Tasks ending `completed`.
 *
 * Everything is derived from a seed, so the LMDB store and the SQLite peer receive the same
 * events, objects and blobs.
 */

export type StepKind =
  | 'created'
  | 'assign'
  | 'compile'
  | 'intend'
  | 'ack'
  | 'lost'
  | 'reconcile'
  | 'observe'
  | 'observeFull'
  | 'settle'
  | 'proposeMissing'
  | 'proposeStale'
  | 'proposeFull'
  | 'verifyPass'
  | 'cancel';

export interface Step {
  event: Record<string, unknown>;
  origin: EventOrigin;
  attachments: Attachments;
}

export const BENCH_SPEC = (taskId: string) => ({
  taskId,
  title: `Fix the defect of ${taskId}`,
  goal: 'Investigate and fix the defect; deliver findings.json and report.json; pass the frozen tests.',
  requiredArtifacts: [
    { name: 'findings.json', kind: 'json' as const, schema: 'json' },
    { name: 'report.json', kind: 'json' as const, schema: 'json' },
  ],
  labels: { suite: 'bench' },
});

/** Zero-padded Task ids keep key order, JS sort order and generation order the same. */
export function benchTaskId(index: number): string {
  return `task-${index.toString().padStart(8, '0')}`;
}

const COMPLETING_TAIL: StepKind[] = ['assign', 'compile', 'intend', 'ack', 'observeFull', 'proposeFull', 'verifyPass'];

/** The kinds of a Task's `events` steps, exactly `events` long (at least 1). */
export function planTask(index: number, events: number, seed: number): StepKind[] {
  const random = seededRandom(seed * 1_000_003 + index);
  const roll = random();
  const tail: StepKind[] =
    roll < 0.8 && events >= 1 + COMPLETING_TAIL.length ? COMPLETING_TAIL : roll < 0.85 && events >= 2 ? ['cancel'] : [];
  const plan: StepKind[] = ['created'];
  let generations = 0;
  const fill = events - 1 - tail.length;
  let cycle: StepKind[] = [];
  while (plan.length - 1 < fill) {
    if (generations >= 2 && random() < 0.02) {
      plan.push('proposeStale');
      continue;
    }
    if (cycle.length === 0) {
      cycle = [
        'assign',
        'compile',
        'intend',
        ...(random() < 0.05 ? (['lost', 'reconcile'] as const) : (['ack'] as const)),
        'observe',
        random() < 0.3 ? 'proposeMissing' : 'settle',
      ];
      generations++;
    }
    plan.push(cycle.shift()!);
  }
  // A Task left with an intent and no recorded response would make boot append `dispatch.lost`.
  if (tail.length === 0 && plan.at(-1) === 'intend') plan[plan.length - 1] = events >= 2 ? 'cancel' : 'created';
  return [...plan, ...tail].slice(0, events);
}

function receipt(
  runId: string,
  contextDigest: string,
  jobId: string,
  artifacts: Array<{ name: string; digest: string; bytes: number }>,
): HarnessRunReceipt {
  return {
    driver: 'codex',
    runId,
    provider: { name: 'codex', version: '0.171.0' },
    model: 'scripted-bench',
    sessionId: `thread-${runId}`,
    contextDigest,
    jobId,
    artifacts,
    artifactRefusals: [],
    usage: { inputTokens: 1843, outputTokens: 412, cachedInputTokens: 0 },
    counts: { messages: 3, thoughts: 1, toolItemsStarted: 4, toolItemsCompleted: 4, protocolErrors: 0 },
    stopReason: 'completed',
    exitCode: 0,
    signal: null,
    timings: { startedAt: '2026-01-01T00:00:00.000Z', endedAt: '2026-01-01T00:00:41.000Z', durationMs: 41_000 },
  };
}

/**
 * Turns the next planned kind into the event (and attachments) the Host or a caller would send,
 * given the Task's current context. Bodies carry seeded random bytes so objects are distinct.
 */
export function materialize(kind: StepKind, taskId: string, context: TaskMachineContext, random: () => number): Step {
  const g = context.generation;
  const host = (event: Record<string, unknown>, attachments: Attachments = {}): Step => ({
    event,
    origin: 'host',
    attachments,
  });
  const external = (event: Record<string, unknown>): Step => ({ event, origin: 'external', attachments: {} });
  const requestId = context.dispatch?.clientRequestId ?? '';
  switch (kind) {
    case 'created': {
      const body = BENCH_SPEC(taskId);
      return host(
        {
          type: 'task.created',
          taskId,
          attempt: 1,
          specDigest: digestOf({ kind: 'task-spec', body }),
          requiredArtifacts: body.requiredArtifacts.map((a) => a.name),
        },
        { objects: [{ kind: 'task-spec', body }] },
      );
    }
    case 'assign':
      return external({
        type: 'assignment.commit',
        harness: g % 2 === 0 ? 'codex' : 'hermes',
        purpose: g % 2 === 0 ? 'investigate' : 'fix',
        instructions: `Attempt ${g + 1}: ${randomHex(random, 24)}`,
      });
    case 'compile': {
      const body = {
        taskId,
        generation: g,
        sources: [
          {
            id: 'spec',
            digest: context.specDigest!,
            trust: 'host' as const,
            reason: 'the Task goal and required artifacts',
          },
          {
            id: 'repo',
            digest: sha256(randomHex(random, 16)),
            trust: 'workspace' as const,
            reason: 'repository snapshot at attempt start',
          },
        ],
        prompt: `Generation ${g}: fix the defect. ${randomHex(random, 32)}`,
      };
      return host(
        { type: 'context.compile', generation: g, contextDigest: digestOf({ kind: 'context', body }) },
        { objects: [{ kind: 'context', body }] },
      );
    }
    case 'intend':
      return host({
        type: 'dispatch.intend',
        generation: g,
        clientRequestId: `${taskId}/a1/g${g}/${randomHex(random, 8)}`,
      });
    case 'ack':
      return host({ type: 'dispatch.ack', clientRequestId: requestId, jobId: `job-${randomHex(random, 16)}` });
    case 'lost':
      return host({ type: 'dispatch.lost', clientRequestId: requestId });
    case 'reconcile':
      return host({ type: 'dispatch.reconcile', clientRequestId: requestId, jobIds: [`job-${randomHex(random, 16)}`] });
    case 'observe':
    case 'observeFull': {
      const names = kind === 'observeFull' ? ['findings.json', 'report.json'] : ['findings.json'];
      const blobs = names.map((name) =>
        Buffer.from(JSON.stringify({ artifact: name, generation: g, note: randomHex(random, 40) })),
      );
      const artifacts = names.map((name, i) => ({ name, digest: sha256(blobs[i]!), bytes: blobs[i]!.length }));
      const body = receipt(requestId, context.contextDigest!, context.dispatch?.jobId ?? 'job-unknown', artifacts);
      return host(
        {
          type: 'run.observe',
          generation: g,
          clientRequestId: requestId,
          contextDigest: context.contextDigest,
          receiptDigest: digestOf({ kind: 'receipt', body }),
          jobStatus: 'succeeded',
          evidence: Object.fromEntries(artifacts.map((a) => [a.name, a.digest])),
        },
        { objects: [{ kind: 'receipt', body }], blobs },
      );
    }
    case 'settle':
      return host({ type: 'evaluation.settle', generation: g });
    case 'proposeMissing':
      return external({
        type: 'completion.propose',
        generation: g,
        contextDigest: context.contextDigest,
        evidence: {},
        summary: 'done',
      });
    case 'proposeStale':
      return external({
        type: 'completion.propose',
        generation: g - 1,
        summary: 'late result of an earlier attempt',
        proposer: 'stale-worker',
      });
    case 'proposeFull':
      return external({
        type: 'completion.propose',
        generation: g,
        contextDigest: context.contextDigest,
        evidence: Object.fromEntries(Object.entries(context.evidence).map(([name, held]) => [name, held.digest])),
        summary: 'findings and fix delivered',
        proposer: 'codex',
      });
    case 'verifyPass': {
      const sourceDigest = sha256(randomHex(random, 16));
      const verification = {
        taskId,
        generation: g,
        jobId: `job-${randomHex(random, 16)}`,
        exitCode: 0,
        passed: true,
        sourceDigest,
        frozenTestDigests: { 'test/alloc.test.js': sha256(`frozen ${taskId}`) },
        frozenTestsIntact: true,
      };
      const verificationDigest = digestOf({ kind: 'verification', body: verification });
      const evidence = Object.fromEntries(Object.entries(context.evidence).map(([name, held]) => [name, held.digest]));
      const outcome = {
        taskId,
        attempt: context.attempt,
        generation: g,
        evidence,
        sourceDigest,
        verification: verificationDigest,
        result: { summary: 'fixed' },
      };
      return host(
        {
          type: 'verification.record',
          generation: g,
          passed: true,
          verificationDigest,
          sourceDigest,
          outcomeDigest: digestOf({ kind: 'outcome', body: outcome }),
        },
        {
          objects: [
            { kind: 'verification', body: verification },
            { kind: 'outcome', body: outcome },
          ],
        },
      );
    }
    case 'cancel':
      return external({ type: 'task.cancel', reason: 'superseded by a newer Task' });
  }
}
