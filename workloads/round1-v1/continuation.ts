import type { Supervisor } from '../../kernel/index.js';
import { openHost } from '../../frontier/index.js';
import type { TaskSpecInput } from '../../objects/index.js';
import type { Io } from '../../scripts/cli-io.js';
import type { Round1Behaviour } from './behaviours.js';
import { round1Harnesses } from './harnesses.js';
import { ledgerEffectAdapter } from './ledger/index.js';
import { copyWorld } from './scenarios.js';
import type { AcpAgent } from '../shared/harnesses.js';
import { loadWorkload, type Workload } from '../../scripts/workload.js';

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

type HarnessName = 'codex' | 'hermes';
export type FirstChoice = 'reconcile' | 'redispatch' | 'classify-failed';

export interface Trajectory {
  name: string;
  /** Decides `maintain` in the first process. */
  a: HarnessName;
  /** Decides `continue` in the fresh process. */
  b: HarnessName;
  first: FirstChoice;
}

const ORDERS = [
  { order: 'codex-acp', a: 'codex', b: 'hermes' },
  { order: 'acp-codex', a: 'hermes', b: 'codex' },
] as const;
const FIRST: readonly FirstChoice[] = ['reconcile', 'redispatch', 'classify-failed'];

export const TRAJECTORIES: readonly Trajectory[] = ORDERS.flatMap(({ order, a, b }) =>
  FIRST.map((first) => ({ name: `${order}-${first}`, a, b, first })),
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
  const maintenance = {
    kind: 'effect',
    adapter: 'ledger',
    ...maintenanceOf(trajectory),
    reconcile: 'decision',
  } as const;
  const decision = workload.spec.requiredArtifacts.filter((a) => a.name === 'decision.json');
  return {
    title: `Record the schema version 1 maintenance in the shared ledger (${trajectory.name})`,
    goal: 'Record the maintenance that moves the client to schema version 1 (the catalog names migrate-v1) in the shared maintenance ledger, exactly once. The ledger is not idempotent: every request appends an entry.',
    world,
    ...(workload.spec.workspaceSeed ? { workspaceSeed: workload.spec.workspaceSeed } : {}),
    ...(workload.spec.sources ? { sources: workload.spec.sources } : {}),
    requiredArtifacts: decision,
    stages: [
      {
        name: 'maintain',
        instructions:
          'Choose one of the candidate actions below and write decision.json. The Host performs it through the ledger.',
        produces: ['decision.json'],
        decision: {
          artifact: 'decision.json',
          candidates: [
            {
              id: 'record-maintenance',
              summary: 'append the migrate-v1 maintenance to the shared ledger',
              supportedBy: SUPPORT,
              action: maintenance,
            },
            { id: 'declare-done', summary: 'record nothing', supportedBy: ['goal'], action: { kind: 'none' } },
          ],
        },
      },
      {
        name: 'continue',
        instructions:
          'An earlier request to record the maintenance got no answer: it may or may not be in the ledger. Choose how to continue and write decision.json.',
        produces: ['decision.json'],
        decision: {
          artifact: 'decision.json',
          candidates: [
            {
              id: 'reconcile',
              summary: 'look the earlier request up in the ledger by its request id',
              supportedBy: SUPPORT,
              action: { kind: 'reconcile' },
            },
            {
              id: 'redispatch',
              summary: 'send the maintenance again under a new request id',
              supportedBy: SUPPORT,
              action: maintenance,
            },
            {
              id: 'classify-failed',
              summary: 'classify the earlier request as failed',
              supportedBy: SUPPORT,
              action: { kind: 'abandon' },
            },
          ],
        },
      },
    ],
    labels: { ...workload.spec.labels, trajectory: trajectory.name },
  };
}

/** What the scripted model does: A maintains; B's first continue run makes the trajectory's choice, later ones reconcile. */
export function continuationBehaviour(
  trajectory: Trajectory,
  run: { stage: string; generation: number },
): Round1Behaviour {
  if (run.stage === 'maintain') return 'maintain';
  return run.generation === 2 ? trajectory.first : 'reconcile';
}

const byName = (name: string | undefined) => TRAJECTORIES.find((t) => t.name === name);

/** The states a continuation Task rests in (held and blocked are failures the read-back names). */
const RESTS = ['waiting', 'effect_unknown.held', 'blocked'];

/**
 * One half of the continuation, in its own process (`ordivon demo --workload round1
 * --continuation-phase lose|continue --ledger URL`): a Host on `state` with the round1 harnesses
 * and the ledger at `ledgerUrl` registered as `ledger`. `lose` creates the six Tasks and runs
 * `maintain` on A; `continue` runs `continue` on B for every continuation Task the store holds,
 * once more after a refusal. Prints what it did as JSON (with its pid) and exits.
 */
export async function continuationPhase(
  phase: 'lose' | 'continue',
  options: { state: string; acpAgent: AcpAgent; ledgerUrl: string },
  io: Io,
): Promise<number> {
  const workload = loadWorkload('round1-v1');
  const bound = new Map<string, Trajectory>();
  const scripted = round1Harnesses({
    acpAgent: options.acpAgent,
    behaviourOf: (run) => continuationBehaviour(bound.get(run.taskId)!, run),
  });
  const host = await openHost({
    state: options.state,
    harnesses: scripted.harnesses,
    effectAdapters: { ledger: ledgerEffectAdapter(options.ledgerUrl) },
    onStep: (taskId, text) => io.err(`  [${bound.get(taskId)?.name ?? taskId.slice(0, 13)}] ${text}`),
  });
  try {
    const sup = host.supervisor;
    const tasks =
      phase === 'lose'
        ? await Promise.all(TRAJECTORIES.map((t) => lose(sup, workload, options.state, t, bound)))
        : await Promise.all(
            sup.listTasks().flatMap(({ taskId }) => {
              const trajectory = byName(sup.getTask(taskId)?.spec.labels['trajectory']);
              if (!trajectory) return [];
              bound.set(taskId, trajectory);
              return [carryOn(sup, taskId, trajectory)];
            }),
          );
    io.out(JSON.stringify({ pid: process.pid, tasks }));
    return 0;
  } finally {
    await host.stop({ jobs: 'stop' });
    await scripted.close();
  }
}

async function lose(
  sup: Supervisor,
  workload: Workload,
  state: string,
  trajectory: Trajectory,
  bound: Map<string, Trajectory>,
) {
  const world = copyWorld(workload, state, `continuation-${trajectory.name}`);
  const { taskId } = await sup.createTask(continuationSpec(workload, world, trajectory));
  bound.set(taskId, trajectory);
  await sup.send(taskId, { type: 'assignment.commit', harness: trajectory.a, stage: 'maintain' });
  const rest = await sup.waitFor(taskId, RESTS, ['cancelled']);
  return { name: trajectory.name, taskId, state: rest, effect: sup.getTask(taskId)?.context.effect?.status ?? null };
}

/** B continues; after a refusal (the Effect still unknown) the stage is assigned again, once. */
async function carryOn(sup: Supervisor, taskId: string, trajectory: Trajectory) {
  let assignments = 0;
  let rest = '';
  do {
    await sup.send(taskId, { type: 'assignment.commit', harness: trajectory.b, stage: 'continue' });
    assignments++;
    rest = await sup.waitFor(taskId, RESTS, ['cancelled']);
  } while (rest === 'waiting' && sup.getTask(taskId)?.context.effect?.status === 'unknown' && assignments < 2);
  return { name: trajectory.name, taskId, state: rest, effect: sup.getTask(taskId)?.context.effect?.status ?? null };
}
