import { demoConfinement } from './confinement.js';
import type { Supervisor } from '../../kernel/index.js';
import type { EffectAdapter } from '../../frontier/index.js';
import { openHost } from '../../host/index.js';
import type { TaskSpecInput } from '../../objects/index.js';
import type { Io } from '../../cli/cli-io.js';
import type { Round1Behaviour, Round1Choices } from '../round1-v1/behaviours.js';
import { round1Harnesses } from '../round1-v1/harnesses.js';
import type { AcpAgent } from './harnesses.js';

/**
 * Continuation after loss, for any world with an External Effect: provider A's first decision
 * stage chooses the Effect; the system commits it and drops the answer, so the Effect is unknown
 * and the Task waits (`reconcile: 'decision'`). That Host process exits. A fresh process, with
 * provider B (another harness: no transcript, no session), is assigned the `continue` decision
 * stage: `reconcile` (look the request id up), `redispatch` (the same operation under a new
 * request id) or `classify-failed` (abandon). While the Effect is unknown only `reconcile` is
 * taken; B is asked again after a refusal. What the lookup finds is the world's: a receipt, or a
 * provider that cannot say and an operator asked.
 */

export type HarnessName = 'codex' | 'hermes';
export type FirstChoice = 'reconcile' | 'redispatch' | 'classify-failed';

export interface ContinuationTrajectory {
  name: string;
  /** Decides the first stage in the first process. */
  a: HarnessName;
  /** Decides `continue` in the fresh process. */
  b: HarnessName;
  first: FirstChoice;
}

/** Both orders: Codex then the ACP agent, and the reverse. */
export const CONTINUATION_ORDERS = [
  { order: 'codex-acp', a: 'codex', b: 'hermes' },
  { order: 'acp-codex', a: 'hermes', b: 'codex' },
] as const;
export const FIRST_CHOICES: readonly FirstChoice[] = ['reconcile', 'redispatch', 'classify-failed'];

type Stage = NonNullable<TaskSpecInput['stages']>[number];
type Candidate = NonNullable<Stage['decision']>['candidates'][number];

/**
 * The two decision stages, both writing `artifact`: `first` offers the Effect (`perform`, whose
 * action must reconcile by `decision`) and doing nothing; `continue` offers the three ways on.
 */
export function continuationStages(options: {
  first: { name: string; instructions: string; perform: Candidate };
  artifact: string;
  support: string[];
  lost: string;
}): Stage[] {
  const { perform, name, instructions } = options.first;
  const decide = (stage: string, text: string, candidates: Candidate[]): Stage => ({
    name: stage,
    instructions: text,
    produces: [options.artifact],
    decision: { artifact: options.artifact, candidates },
  });
  return [
    decide(name, instructions, [
      perform,
      { id: 'declare-done', summary: 'do nothing', supportedBy: ['goal'], action: { kind: 'none' } },
    ]),
    decide('continue', `${options.lost} Choose how to continue and write ${options.artifact}.`, [
      {
        id: 'reconcile',
        summary: 'look the earlier request up by its request id',
        supportedBy: options.support,
        action: { kind: 'reconcile' },
      },
      {
        id: 'redispatch',
        summary: 'send it again under a new request id',
        supportedBy: options.support,
        action: perform.action,
      },
      {
        id: 'classify-failed',
        summary: 'classify the earlier request as failed',
        supportedBy: options.support,
        action: { kind: 'abandon' },
      },
    ]),
  ];
}

/** What the scripted model does: A takes the Effect; B's first continue run makes the trajectory's choice, later ones reconcile. */
export function continuationBehaviour(
  trajectory: ContinuationTrajectory,
  run: { stage: string; generation: number },
): Round1Behaviour {
  if (run.stage !== 'continue') return 'maintain';
  return run.generation === 2 ? trajectory.first : 'reconcile';
}

/** The states a continuation Task rests in: waiting, put to an operator, blocked. */
export const CONTINUATION_RESTS = ['waiting', 'effect_unknown.held', 'blocked'];

/** One Task's state at the end of a phase, as the phase prints it. */
export interface PhaseTask {
  name: string;
  taskId: string;
  state: string;
  effect: string | null;
}

export interface ContinuationWorld<T extends ContinuationTrajectory> {
  trajectories: readonly T[];
  /** The first decision stage's name. */
  firstStage: string;
  /** What `maintain` writes in this world (the Effect's candidate and why). */
  choices?: Round1Choices;
  effectAdapters: Record<string, EffectAdapter>;
  /** The trajectory's Task, made ready (a world copied, a target put) in the `lose` phase. */
  specOf(trajectory: T): Promise<TaskSpecInput>;
}

/**
 * One half of a continuation, in its own process: a Host on `state` with Codex and the ACP agent
 * as `codex` and `hermes`. `lose` creates every trajectory's Task and runs the first stage on A;
 * `continue` runs `continue` on B for every Task of a trajectory the store holds, once more after
 * a refusal while the Effect is still unknown. Prints what it did as JSON (with its pid).
 */
export async function continuationPhase<T extends ContinuationTrajectory>(
  phase: 'lose' | 'continue',
  world: ContinuationWorld<T>,
  options: { state: string; acpAgent: AcpAgent },
  io: Io,
): Promise<number> {
  const bound = new Map<string, T>();
  const scripted = round1Harnesses({
    acpAgent: options.acpAgent,
    behaviourOf: (run) => continuationBehaviour(bound.get(run.taskId)!, run),
    ...(world.choices ? { choices: world.choices } : {}),
  });
  const host = await openHost({
    state: options.state,
    harnesses: scripted.harnesses,
    confinement: demoConfinement(),
    effectAdapters: world.effectAdapters,
    onStep: (taskId, text) => io.err(`  [${bound.get(taskId)?.name ?? taskId.slice(0, 13)}] ${text}`),
  });
  const byName = (name: string | undefined) => world.trajectories.find((t) => t.name === name);
  try {
    const sup = host.supervisor;
    const tasks =
      phase === 'lose'
        ? await Promise.all(
            world.trajectories.map(async (t) => {
              const { taskId } = await sup.createTask(await world.specOf(t));
              bound.set(taskId, t);
              await sup.send(taskId, { type: 'assignment.commit', harness: t.a, stage: world.firstStage });
              return rest(sup, taskId, t, await sup.waitFor(taskId, CONTINUATION_RESTS, ['cancelled']));
            }),
          )
        : await Promise.all(
            sup.listTasks().flatMap(({ taskId }) => {
              const t = byName(sup.getTask(taskId)?.spec.labels['trajectory']);
              if (!t) return [];
              bound.set(taskId, t);
              return [carryOn(sup, taskId, t)];
            }),
          );
    io.out(JSON.stringify({ pid: process.pid, tasks }));
    return 0;
  } finally {
    await host.stop({ jobs: 'stop' });
    await scripted.close();
  }
}

function rest(sup: Supervisor, taskId: string, t: ContinuationTrajectory, state: string): PhaseTask {
  return { name: t.name, taskId, state, effect: sup.getTask(taskId)?.context.effect?.status ?? null };
}

/** B continues; after a refusal (the Effect still unknown) the stage is assigned again, once. */
async function carryOn(sup: Supervisor, taskId: string, trajectory: ContinuationTrajectory): Promise<PhaseTask> {
  let assignments = 0;
  let state = '';
  do {
    await sup.send(taskId, { type: 'assignment.commit', harness: trajectory.b, stage: 'continue' });
    assignments++;
    state = await sup.waitFor(taskId, CONTINUATION_RESTS, ['cancelled']);
  } while (state === 'waiting' && sup.getTask(taskId)?.context.effect?.status === 'unknown' && assignments < 2);
  return rest(sup, taskId, trajectory, state);
}
