import { z } from 'zod';
import { clientRequestId } from '../../frontier/index.js';
import { LatestRejection, taskRejections, taskRuns, type TaskRejection, type TaskRun } from '../../views/index.js';
import type { Runtime } from '../../runtime/index.js';
import type { EventStore } from '../../store/index.js';
import { PLANS, type ScenarioFacts, type ScenarioName } from './scenarios.js';

/** One expectation of the demo: what must hold, whether it did, and what was observed. */
export interface Expectation {
  scenario: ScenarioName | 'demo';
  what: string;
  held: boolean;
  observed: string;
}

/** What the F3 driving processes reported about themselves (pids, and where the first one stopped). */
export const F3Phases = z.object({
  lost: z.object({
    pid: z.number().int(),
    taskId: z.string(),
    lastEvent: z.string(),
    revision: z.number().int(),
    state: z.string(),
  }),
  reconciled: z.object({ pid: z.number().int(), taskId: z.string(), state: z.string() }),
});
export type F3Phases = z.infer<typeof F3Phases>;

/** A scenario's result as read back from the durable state alone, with its checked expectations. */
export interface ScenarioReport {
  name: ScenarioName;
  title: string;
  taskId: string;
  state: string;
  generation: number;
  revision: number;
  outcome: {
    digest: string;
    generation: number;
    sourceDigest: string;
    evidence: Record<string, string>;
    verification: string;
  } | null;
  verification: { passed: boolean; sourceDigest: string; digest: string } | null;
  /** Every rejection, from the journal (`taskRejections`). */
  rejections: TaskRejection[];
  runs: TaskRun[];
  /** The scenario's observed counters, one line for the fault summary. */
  counters: Record<string, number | string>;
  expectations: Expectation[];
}

const ProjectedTask = z.object({
  state: z.string(),
  revision: z.number().int(),
  snapshot: z.object({
    context: z.object({
      attempt: z.number().int(),
      generation: z.number().int(),
      verification: z.object({ passed: z.boolean(), sourceDigest: z.string(), digest: z.string() }).nullable(),
      outcome: z.object({ digest: z.string() }).nullable(),
      rejected: z.number().int(),
      lastRejection: LatestRejection.nullable(),
    }),
  }),
});
const OutcomeBody = z.object({
  generation: z.number().int(),
  sourceDigest: z.string(),
  evidence: z.record(z.string(), z.string()),
  verification: z.string(),
});
const VerificationBody = z.object({ passed: z.boolean(), sourceDigest: z.string(), frozenTestsIntact: z.boolean() });
const Reconcile = z.object({ jobIds: z.array(z.string()) });

/**
 * Reads one scenario's Task back from a read-only store and the Runtime's job records, and checks
 * every expectation of its plan. Nothing here trusts what the driving process said except `facts`
 * that the store cannot know (the answer to a refused send, the F3 processes' pids).
 */
export async function reportScenario(
  store: EventStore,
  runtime: Runtime,
  name: ScenarioName,
  taskId: string,
  facts: ScenarioFacts,
  f3?: F3Phases,
): Promise<ScenarioReport> {
  const plan = PLANS[name];
  const projected = ProjectedTask.parse(store.projection(taskId));
  const context = projected.snapshot.context;
  const events = [...store.stream(taskId)].map(({ revision, event }) => ({ revision, ...event }));
  const ofGeneration = (type: string, generation: number) =>
    events.filter((e) => e.type === type && e.data['generation'] === generation).length;
  const jobs = async (generation: number, what: 'run' | 'verify') =>
    (await runtime.findJobs({ clientRequestId: clientRequestId(taskId, context.attempt, generation, what) })).length;
  const outcome = context.outcome
    ? { digest: context.outcome.digest, ...OutcomeBody.parse(store.getObject(context.outcome.digest, 'outcome').body) }
    : null;
  const runs = taskRuns({ events, object: (digest) => store.getObject(digest, 'receipt').body });
  const rejections = taskRejections(events, context.lastRejection);
  const expectations: Expectation[] = [];
  const expect = (what: string, observed: unknown, expected: unknown) =>
    expectations.push({
      scenario: name,
      what,
      held: JSON.stringify(observed) === JSON.stringify(expected),
      observed: JSON.stringify(observed),
    });
  const counters: Record<string, number | string> = {};

  expect('state', projected.state, plan.ends);
  expect('the context counts every rejection the journal holds', context.rejected, rejections.length);
  if (plan.ends === 'completed') {
    expect('outcome committed', outcome !== null, true);
    if (outcome) {
      const verification = VerificationBody.parse(store.getObject(outcome.verification, 'verification').body);
      expect(
        'verification passed with the frozen tests intact',
        [verification.passed, verification.frozenTestsIntact],
        [true, true],
      );
      expect(
        'outcome binds the Host-computed source digest of the verification',
        outcome.sourceDigest,
        verification.sourceDigest,
      );
      expect('outcome binds both artifacts', Object.keys(outcome.evidence).sort(), [
        'completion.json',
        'diagnosis.json',
      ]);
      const seed = runs.find((r) => r.purpose === 'diagnose')?.sourceDigest;
      expect('the repair changed the source', outcome.sourceDigest !== seed, true);
    }
  } else {
    expect('no outcome', outcome, null);
  }
  const generations = Array.from({ length: context.generation }, (_, i) => i + 1);
  expect(
    'one dispatch intent per generation',
    generations.map((g) => ofGeneration('dispatch.intend', g)),
    generations.map(() => 1),
  );

  switch (name) {
    case 'codex-first':
    case 'hermes-first':
      expect('no rejections', rejections, []);
      expect(
        'harness per generation',
        runs.map((r) => [r.generation, r.harness, r.purpose]),
        [
          [1, plan.diagnoser, 'diagnose'],
          [2, plan.repairer, 'repair'],
        ],
      );
      break;
    case 'F1': {
      const stale = facts.staleProposal;
      Object.assign(counters, {
        'stale proposal': stale
          ? `${stale.written ? 'retained' : 'not written'} r${stale.revision}, ${stale.admitted ? 'admitted' : (stale.code ?? '?')}`
          : 'not sent',
        'verifications of g1': ofGeneration('verification.record', 1),
        'verify jobs for g1': await jobs(1, 'verify'),
        'run jobs for g1': await jobs(1, 'run'),
        'outcome from generation': outcome?.generation ?? '-',
      });
      expect(
        'F1 stale proposal retained and rejected stale_assignment',
        stale && [stale.written, stale.admitted, stale.code],
        [true, false, 'stale_assignment'],
      );
      expect(
        'F1 rejections',
        rejections.map((r) => [r.event, r.reason, r.generation]),
        [['completion.propose', 'stale_assignment', 1]],
      );
      expect(
        'F1 the verifier did not run for generation 1',
        [counters['verifications of g1'], counters['verify jobs for g1']],
        [0, 0],
      );
      expect('F1 no job dispatched for it (only the diagnosis run of g1)', counters['run jobs for g1'], 1);
      expect('F1 the outcome is generation 2', outcome?.generation, 2);
      break;
    }
    case 'F2': {
      const g2 = runs.find((r) => r.generation === 2);
      Object.assign(counters, {
        'g2 exit': g2 ? `${g2.jobStatus}/${g2.stopReason}` : '-',
        'g2 evidence': g2 ? Object.keys(g2.evidence).join(',') || 'none' : '-',
        rejection: rejections.map((r) => `${r.reason} g${r.generation}`).join(', ') || 'none',
        'verify jobs for g2': await jobs(2, 'verify'),
        'completed by generation': outcome?.generation ?? '-',
      });
      expect(
        'F2 rejections',
        rejections.map((r) => [r.event, r.reason, r.generation]),
        [['completion.propose', 'missing_artifact', 2]],
      );
      expect(
        'F2 generation 2 succeeded without evidence',
        [g2?.jobStatus, g2 && Object.keys(g2.evidence)],
        ['succeeded', []],
      );
      expect(
        'F2 verification skipped for generation 2',
        [ofGeneration('verification.record', 2), counters['verify jobs for g2']],
        [0, 0],
      );
      expect('F2 a later Assignment completed it', outcome?.generation, 3);
      break;
    }
    case 'F3': {
      const reconcile = events.find((e) => e.type === 'dispatch.reconcile');
      const matching = reconcile ? Reconcile.parse(reconcile.data).jobIds.length : 0;
      Object.assign(counters, {
        'dispatch calls': ofGeneration('dispatch.intend', 2),
        'stopped at': f3 ? `${f3.lost.lastEvent} r${f3.lost.revision} (pid ${f3.lost.pid})` : '-',
        'reconciled by': f3 ? `pid ${f3.reconciled.pid}` : '-',
        'matching jobs': matching,
        'jobs under the id': await jobs(2, 'run'),
        redispatches: ofGeneration('dispatch.intend', 2) - 1,
      });
      expect('F3 the first process stopped with the dispatch unknown', f3 && [f3.lost.lastEvent, f3.lost.state], [
        'dispatch.lost',
        'assigned.unknown',
      ]);
      expect(
        'F3 a fresh process reconciled',
        f3 !== undefined &&
          f3.reconciled.pid !== f3.lost.pid &&
          reconcile !== undefined &&
          reconcile.revision > f3.lost.revision,
        true,
      );
      expect(
        'F3 dispatch calls = 1, matching jobs = 1',
        [counters['dispatch calls'], matching, counters['jobs under the id']],
        [1, 1, 1],
      );
      break;
    }
    case 'claims-success': {
      const g2 = runs.find((r) => r.generation === 2);
      Object.assign(counters, {
        'final text': g2?.finalTextSample ?? '-',
        refused: g2
          ? Object.entries(g2.refused)
              .map(([n, why]) => `${n} (${why.code}: ${why.detail})`)
              .join(', ') || 'none'
          : '-',
        rejection: rejections.map((r) => `${r.reason} g${r.generation}`).join(', ') || 'none',
        'verify jobs for g2': await jobs(2, 'verify'),
      });
      expect(
        'claims-success the text claims success',
        g2?.finalText === 'structured' && /repaired|success|pass/i.test(g2.finalTextSample ?? ''),
        true,
      );
      expect(
        'claims-success completion.json refused as invalid',
        Object.entries(g2?.refused ?? {}).map(([n, why]) => [n, why.code]),
        [['completion.json', 'artifact_invalid']],
      );
      expect(
        'claims-success rejected missing_artifact, nothing verified',
        [rejections.map((r) => r.reason), counters['verify jobs for g2']],
        [['missing_artifact'], 0],
      );
      break;
    }
  }
  return {
    name,
    title: plan.title,
    taskId,
    state: projected.state,
    generation: context.generation,
    revision: projected.revision,
    outcome,
    verification: context.verification,
    rejections,
    runs,
    counters,
    expectations,
  };
}
