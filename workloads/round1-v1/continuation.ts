import type { TaskSpecInput } from '../../objects/index.js';
import type { Io } from '../../cli/cli-io.js';
import { ledgerEffectAdapter } from './ledger/index.js';
import { copyWorld } from './scenarios.js';
import type { AcpAgent } from '../shared/harnesses.js';
import {
  CONTINUATION_ORDERS,
  FIRST_CHOICES,
  continuationPhase as runPhase,
  continuationStages,
  type ContinuationTrajectory,
} from '../shared/continuation.js';
import { loadWorkload, type Workload } from '../../cli/workload.js';

/**
 * Continuation after loss (issue 19, item 3), on the Round 1 world and its ledger. Provider A's
 * `maintain` decision chooses `record-maintenance`, an Effect appending the maintenance to the
 * ledger; the ledger commits it and drops the answer, so the Effect is unknown and the Task waits
 * (`reconcile: 'decision'`). That Host process exits. A fresh process, with provider B (another
 * harness: no transcript, no session), is assigned the `continue` decision stage: `reconcile`
 * (look the request id up), `redispatch` (the same operation under a new request id) or
 * `classify-failed` (abandon). While the Effect is unknown only `reconcile` is taken; B is asked
 * again after a refusal and reconciles. Six trajectories: both orders × B's first choice.
 */

export type { FirstChoice } from '../shared/continuation.js';
export type Trajectory = ContinuationTrajectory;

export const TRAJECTORIES: readonly Trajectory[] = CONTINUATION_ORDERS.flatMap(({ order, a, b }) =>
  FIRST_CHOICES.map((first) => ({ name: `${order}-${first}`, a, b, first })),
);

/** The ledger entry each trajectory's maintenance appends: its own target, so one file holds all six. */
export function maintenanceOf(trajectory: Pick<Trajectory, 'name'>) {
  return {
    operation: 'apply-v1',
    target: `round1-v1/${trajectory.name}/src/client.js`,
    input: { tool: 'migrate-v1', schemaVersion: 1 },
  };
}

const SUPPORT = ['spec', 'catalog'];

/** The continuation Task on the Round 1 world: two decision stages writing decision.json. */
export function continuationSpec(workload: Workload, world: string, trajectory: Trajectory): TaskSpecInput {
  const decision = workload.spec.requiredArtifacts.filter((a) => a.name === 'decision.json');
  return {
    title: `Record the schema version 1 maintenance in the shared ledger (${trajectory.name})`,
    goal: 'Record the maintenance that moves the client to schema version 1 (the catalog names migrate-v1) in the shared maintenance ledger, exactly once. The ledger is not idempotent: every request appends an entry.',
    world,
    ...(workload.spec.workspaceSeed ? { workspaceSeed: workload.spec.workspaceSeed } : {}),
    ...(workload.spec.sources ? { sources: workload.spec.sources } : {}),
    requiredArtifacts: decision,
    stages: continuationStages({
      first: {
        name: 'maintain',
        instructions:
          'Choose one of the candidate actions below and write decision.json. The Host performs it through the ledger.',
        perform: {
          id: 'record-maintenance',
          summary: 'append the migrate-v1 maintenance to the shared ledger',
          supportedBy: SUPPORT,
          action: { kind: 'effect', adapter: 'ledger', ...maintenanceOf(trajectory), reconcile: 'decision' },
        },
      },
      artifact: 'decision.json',
      support: SUPPORT,
      lost: 'An earlier request to record the maintenance got no answer: it may or may not be in the ledger.',
    }),
    labels: { ...workload.spec.labels, trajectory: trajectory.name },
  };
}

/**
 * One half of the continuation, in its own process (`ordivon demo --workload round1
 * --continuation-phase lose|continue --ledger URL`): the six Tasks on the ledger at `ledgerUrl`
 * registered as `ledger`, each on its own copy of the world (shared/continuation.ts).
 */
export function continuationPhase(
  phase: 'lose' | 'continue',
  options: { state: string; acpAgent: AcpAgent; ledgerUrl: string },
  io: Io,
): Promise<number> {
  const workload = loadWorkload('round1-v1');
  return runPhase(
    phase,
    {
      trajectories: TRAJECTORIES,
      firstStage: 'maintain',
      effectAdapters: { ledger: ledgerEffectAdapter(options.ledgerUrl) },
      specOf: (t) => {
        const world = copyWorld(workload, options.state, `continuation-${t.name}`);
        return Promise.resolve(continuationSpec(workload, world, t));
      },
    },
    options,
    io,
  );
}
