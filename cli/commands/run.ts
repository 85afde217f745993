import {
  HostError,
  pinFrozenTests,
  parseTaskSpec,
  specDifferences,
  owedStart,
  waitForTask,
  type TaskView,
} from '../../kernel/index.js';
import { budgetAsked, hostOptionsOf, retryAsked } from '../../frontier/index.js';
import { openHost, type Host } from '../../host/index.js';
import { stageNamed, type TaskSpec } from '../../objects/index.js';
import { RESTING_TASK_STATES, isTaskState } from '../../machines/index.js';
import { CliError, EXIT, cliErrorOf, emit, type CliErrorCode, type Io } from '../cli-io.js';
import { readSpecFile } from '../spec-file.js';
import { appliedText, checkRepository, workBack, type WorkBack } from './apply.js';
import { loadConfig } from '../config.js';
import { checkPlan, stageStatus } from '../run-plan.js';
import type { PlannedStage } from '../stages-flag.js';
import type { RunArgs } from './run-flags.js';
import { followTask } from '../run-progress.js';
import { serveRun } from './run-service.js';
import { effectAdaptersOf } from '../effect-adapters.js';
import { resolveStateRoot } from '../../store/index.js';
import { onStopSignal } from '../stop-signals.js';

/** States in which a Task does nothing until it is sent an event. */
const REST: readonly string[] = RESTING_TASK_STATES;

/** Why a run did not complete the Task: a code and a sentence, printed and returned as data. */
interface NotCompleted {
  code: string;
  message: string;
}

/** `ordivon run` (run-command.ts defines its flags and what it does). */
export async function runTask(values: RunArgs, io: Io): Promise<number> {
  const spec = readSpec(values.spec, values.task);
  const loaded = await loadConfig(values.config);
  const harnesses = loaded?.config.harnesses ?? {};
  checkPlan(values.stages, spec, harnesses);
  if (!values.apply && (values.repo !== undefined || values.branch !== undefined))
    throw new CliError('usage', '--repo and --branch go with --apply', { exit: EXIT.usage, path: 'apply' });
  // Refused before any stage runs: what apply will refuse anyway once the Task completes.
  if (values.apply)
    await checkRepository(values.repo, values.branch ?? (spec.taskId ? `ordivon/${spec.taskId}` : undefined));
  const say = (line: string) => io.err(line);
  if (loaded?.config.confinement === 'none')
    say('ordivon run: confinement none: agents, their tools and verification run unconfined, as this user');

  let host: Host;
  try {
    host = await openHost({
      state: values.state,
      purpose: `ordivon run pid ${process.pid}`,
      harnesses,
      ...(loaded ? hostOptionsOf(loaded.config) : {}),
      ...(loaded ? await effectAdaptersOf(loaded.config, resolveStateRoot(values.state)) : {}),
    });
  } catch (error) {
    if (error instanceof HostError) throw cliErrorOf(error, { details: { findings: error.findings } });
    throw error;
  }
  // A signal stops the Host politely (the provider is stopped, its job recorded) instead of killing
  // the process; what was durable is resumed by running the command again.
  let onSignal: (signal: NodeJS.Signals) => void = () => {};
  let signalled: NodeJS.Signals | undefined;
  const interrupted = new Promise<NotCompleted>((resolve) => {
    onSignal = (signal) => {
      signalled = signal;
      resolve({ code: 'interrupted', message: `${signal}: stopped; run again with --task to resume` });
    };
  });
  const stopListening = onStopSignal((signal) => onSignal(signal));
  // While it holds the state root, the run answers send/decide/show/list from other shells.
  const stopService = await serveRun(host.supervisor, say);
  try {
    const taskId = await createOrResume(host, spec, say);
    const unfollow = followTask(host.supervisor, taskId, say, values.quiet ? {} : { heartbeat: { rest: REST } });
    const why = await Promise.race([runStages(host, taskId, spec, values.stages, say), interrupted]);
    unfollow();
    // Ctrl-C ends with the shell's convention for SIGINT (128 + 2), so a script can tell it apart.
    return report(io, host, taskId, why, await workBack(host.supervisor, values, taskId, why === null), signalled);
  } finally {
    try {
      await stopService();
      await host.stop();
    } finally {
      stopListening();
    }
  }
}

/** The spec file, parsed, its contracts compiled and its frozen tests pinned; `--task` sets its id. Exit 2 for anything wrong. */
function readSpec(file: string, taskId: string | undefined): TaskSpec {
  const raw = readSpecFile(file);
  try {
    const spec = pinFrozenTests(parseTaskSpec(raw));
    return taskId === undefined ? spec : { ...spec, taskId };
  } catch (error) {
    if (error instanceof HostError) throw cliErrorOf(error, { exit: EXIT.usage });
    throw error;
  }
}

/**
 * Creates the Task, or finds it by id, in whatever state it is. A Task that exists with another
 * spec is `task_exists` (exit 2), naming the fields that differ: resuming must not run one spec's
 * stages against another's Task. The id itself is not compared (`--task` gives it to a spec that
 * has none).
 */
async function createOrResume(host: Host, spec: TaskSpec, say: (line: string) => void): Promise<string> {
  const sup = host.supervisor;
  const existing = spec.taskId !== undefined ? sup.getTask(spec.taskId) : undefined;
  if (existing) {
    const differ = specDifferences(existing.spec, spec);
    if (differ.length > 0)
      throw new CliError(
        'task_exists',
        `task ${existing.taskId} exists with another spec (differs at ${differ.slice(0, 10).join(', ')}${differ.length > 10 ? ', …' : ''})`,
        { exit: EXIT.usage, details: { differs: differ } },
      );
    say(`ordivon run: resuming task ${existing.taskId} (${existing.state}, revision ${existing.revision})`);
    return existing.taskId;
  }
  const { taskId } = await sup.createTask(spec);
  say(`ordivon run: created task ${taskId} (run again with --task ${taskId} to resume)`);
  return taskId;
}

/** Commits each planned stage that has not finished, in order; resolves with why the Task did not complete, or null. */
async function runStages(
  host: Host,
  taskId: string,
  spec: TaskSpec,
  plan: PlannedStage[],
  say: (line: string) => void,
): Promise<NotCompleted | null> {
  const sup = host.supervisor;
  // Resting: no frontier work, or a stage waiting for a person's answer to its retry request. A
  // spec's `start` is the Host's to commit (docs/stages.md): an open Task still owed it is not at rest.
  const atRest = () => {
    const task = sup.getTask(taskId)!;
    return (
      resting(taskId, task) &&
      !owedStart(
        task.spec,
        task.state,
        sup.events(taskId).map((e) => e.type),
      )
    );
  };
  const rest = () => waitForTask(sup, taskId, atRest);
  for (const { stage, harness } of plan) {
    let committedHere = false;
    for (;;) {
      const task = sup.getTask(taskId)!;
      if (isTaskState(task.state, 'completed')) return null;
      if (isTaskState(task.state, 'cancelled', 'blocked')) return stopped(task.state, task.context);
      const status = stageStatus(sup.events(taskId), stage);
      if (status.done) {
        if (!committedHere) say(`  ${`${stage} g${status.generation}`.padEnd(16)} finished earlier: skipped`);
        break;
      }
      if (!atRest()) {
        // An Assignment from an earlier process is still in flight: the Host carries it on from boot.
        await rest();
        continue;
      }
      if (committedHere)
        return asking(taskId, task, unfinished(stage, status.generation, task.context, sup.getTask(taskId)!.state));
      const sent = await sup.send(taskId, { type: 'assignment.commit', harness, stage });
      if (!sent.written)
        return asking(taskId, task, { code: sent.code ?? 'refused', message: `stage ${stage}: ${sent.detail ?? ''}` });
      committedHere = true;
      await rest();
    }
    if (stageNamed(spec, stage)?.proposesCompletion && isTaskState(sup.getTask(taskId)!.state, 'completed'))
      return null;
  }
  const task = sup.getTask(taskId)!;
  if (isTaskState(task.state, 'completed')) return null;
  return {
    code: 'not_completed',
    message: `every stage of --stages ran and the Task is ${task.state}; none of them completed it`,
  };
}

/**
 * A resting state, or a stage whose automatic retries are exhausted or whose run went over its
 * budget, waiting in `evaluating` for a person's answer.
 */
function resting(taskId: string, task: TaskView): boolean {
  return (
    REST.includes(task.state) ||
    retryAsked({ taskId, context: task.context }) ||
    budgetAsked({ taskId, context: task.context })
  );
}

function stopped(
  state: string,
  context: { cancelReason: string | null; lastRejection: { reason: string } | null },
): NotCompleted {
  return isTaskState(state, 'cancelled')
    ? { code: 'task_cancelled', message: `the Task was cancelled: ${context.cancelReason ?? ''}` }
    : {
        code: 'task_blocked',
        message: `the Task is blocked (${context.lastRejection?.reason ?? 'ordivon show TASK_ID says why'})`,
      };
}

/**
 * A Task held on a DecisionRequest waits for a person, not for another run: the message names each
 * pending request and how to answer it.
 */
function asking(
  taskId: string,
  task: { state: string; context: { requests: Record<string, { about: string; status: string }> } },
  why: NotCompleted,
): NotCompleted {
  if (!isTaskState(task.state, 'effect_unknown.held', 'authorizing.held', 'evaluating')) return why;
  const pending = Object.entries(task.context.requests).filter(([, r]) => r.status === 'pending');
  if (pending.length === 0) return why;
  const named = pending.map(([id, r]) => `${id} (about ${r.about})`).join(', ');
  return {
    ...why,
    message: `${why.message}; pending DecisionRequest ${named}: answer with ordivon decide ${taskId} REQUEST_ID --answer ID (ordivon show ${taskId} lists the answers), then run again`,
  };
}

/** Why a stage this run committed did not finish: its latest rejection, or what it settled without. */
function unfinished(
  stage: string,
  generation: number | null,
  context: { lastRejection: { event: string; reason: string; generation: number; detail?: string } | null },
  state: string,
): NotCompleted {
  const rejection = context.lastRejection;
  if (rejection && rejection.generation === generation)
    return {
      code: rejection.reason,
      message: `stage ${stage} (g${generation}): ${rejection.detail ?? `its ${rejection.event} was refused`}`,
    };
  return {
    code: 'missing_artifact',
    message: `stage ${stage} (g${generation}) did not finish: the Task is ${state} without the artifacts it produces`,
  };
}

/**
 * A completed (and, with --apply, applied) Task's outcome on stdout, exit 0. A Task that did not
 * complete, or whose change was not applied, is an error on stderr (`interrupted`: exit 130 after
 * SIGINT), its object naming the Task, its state and workspace.
 */
function report(
  io: Io,
  host: Host,
  taskId: string,
  why: NotCompleted | null,
  back: WorkBack,
  signalled: NodeJS.Signals | undefined,
): number {
  const task = host.supervisor.getTask(taskId)!;
  const outcome = task.context.outcome;
  const body = outcome ? host.supervisor.getObject<Record<string, unknown>>(outcome.digest).body : null;
  const where = {
    taskId,
    state: task.state,
    revision: task.revision,
    completed: why === null,
    workspace: back.workspace,
    ...(outcome ? { outcomeDigest: outcome.digest } : {}),
  };
  if (why !== null)
    throw new CliError(why.code as CliErrorCode, `task ${taskId} is ${task.state}: ${why.message}`, {
      exit: signalled === 'SIGINT' ? EXIT.interrupted : EXIT.failed,
      details: where,
      notes: [`not completed; workspace: ${back.workspace}`],
    });
  if (back.apply && 'error' in back.apply)
    throw new CliError(
      back.apply.error.code as CliErrorCode,
      `task ${taskId} completed (outcome ${outcome?.digest ?? '-'}) but was not applied: ${back.apply.error.message}`,
      { details: where, notes: [`workspace: ${back.workspace}`] },
    );
  const answer = {
    ...where,
    ...(outcome ? { outcome: body } : {}),
    ...(back.apply ? { apply: back.apply } : {}),
  };
  emit(io, answer, () =>
    [
      `completed: task ${taskId}, outcome ${outcome?.digest ?? '-'}`,
      `workspace: ${back.workspace}`,
      ...(body?.['resultArtifact'] ? [`result (${String(body['resultArtifact'])}):`] : []),
      ...(body?.['result'] !== undefined && body['result'] !== null
        ? [typeof body['result'] === 'string' ? body['result'] : JSON.stringify(body['result'], null, 2)]
        : []),
      ...(back.apply && !('error' in back.apply) ? [appliedText(back.apply)] : []),
    ].join('\n'),
  );
  return EXIT.ok;
}
