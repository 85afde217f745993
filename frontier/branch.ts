import { existsSync } from 'node:fs';
import {
  RuntimeError,
  isRuntimeError,
  mergeWorkspaces,
  readArtifact,
  sourceDigest,
  workspacePath,
} from '../runtime/index.js';
import { isTaskState, type BranchState } from '../machines/index.js';
import { TaskId } from '../store/index.js';
import {
  DEFAULT_STAGE,
  type Stage,
  type TaskSpecInput,
  TEMPLATE_PLACEHOLDER,
  fillItem,
  stagesOf,
} from '../objects/index.js';
import { HostError, assignedStage, openDecisionRequest, type TaskHandle, type TaskView } from '../kernel/index.js';
import { clientRequestId, type FrontierDeps, type TaskFamily } from './work-options.js';
import { retainEvidence } from './artifact-evidence.js';
import { evidenceTexts } from './context-compiler.js';
import { untilAborted } from './until-aborted.js';

/*
 * Branch and join (docs/branch-and-join.md). A branch stage runs as child Tasks, each a full Task
 * with its own history, Assignment, generation and outcome: parallel Attempts of the same stage on
 * several harnesses, or a fan-out of a template spec over the items of an artifact. The parent
 * records the fan-out intent (`branch.open`, the children's deterministic ids) before any child
 * exists, each child's end as evidence (`branch.observe`), and the join once (`branch.join`, with
 * the stage's artifacts from the winners' work merged into its workspace). Every step is
 * idempotent: a child is created under its id at most once, its Assignment committed only while it
 * is `open`, and a merge made again ends the same.
 */

/** Labels a child Task carries: its parent and the branch it belongs to. */
export const PARENT_LABEL = 'ordivon.parent';
export const BRANCH_LABEL = 'ordivon.branch';

/** States in which a child has ended as far as its parent's join is concerned. */
const CHILD_ENDS = ['completed', 'cancelled', 'blocked', 'waiting'] as const;

/** The branch a Task's current Assignment runs, or null: a stage naming `parallel` or `fanOut`, or an Assignment naming `a+b`. */
export function branchKind(task: Pick<TaskHandle, 'context' | 'spec'>, stage: Stage): 'parallel' | 'fanOut' | null {
  if (stage.fanOut) return 'fanOut';
  if (stage.parallel || task.context.assignment?.harness.includes('+')) return 'parallel';
  return null;
}

/** The Supervisor the branch's work goes through; a frontier without one cannot fan out. */
function familyOf(deps: FrontierDeps): TaskFamily {
  const family = deps.options.tasks?.();
  if (!family) throw new HostError('not_serving', 'a branch stage needs the Host its children run on');
  return family;
}

/**
 * `dispatch` of a branch stage: commits the fan-out intent, the children's ids and harnesses
 * (items, for a fan-out), before any child is created. Refused, nothing written, when a fan-out's
 * list artifact is not held or is not a JSON array (`branch_invalid`).
 */
export async function openBranch(deps: FrontierDeps, task: TaskHandle, kind: 'parallel' | 'fanOut'): Promise<void> {
  const { context } = task;
  const stage = assignedStage(task);
  const branchId = clientRequestId(task.taskId, context.attempt, context.generation, 'branch');
  const prefix = `${task.taskId}.g${context.generation}`;
  const harness = context.assignment!.harness;
  let children: Array<{ taskId: string; harness: string; item?: string }>;
  let join: string;
  // A decision stage's candidates act (Effects among them): several Attempts would act several times.
  if (stage.decision)
    throw new HostError(
      'branch_invalid',
      `stage ${stage.name} is a decision stage: it runs one harness, not ${harness}`,
    );
  if (kind === 'parallel') {
    if (stage.produces.length === 0)
      throw new HostError(
        'branch_invalid',
        `stage ${stage.name} produces nothing for parallel Attempts to be verified on`,
      );
    const harnesses = harness.includes('+') ? harness.split('+') : stage.parallel!;
    children = harnesses.map((name, i) => ({ taskId: `${prefix}.${i + 1}-${safe(name)}`, harness: name }));
    join = stage.join ?? 'first_verified';
  } else {
    if (harness.includes('+'))
      throw new HostError('branch_invalid', `stage ${stage.name} fans out to one harness, not ${harness}`);
    children = itemsOf(task, stage).map((item, i) => ({ taskId: `${prefix}.${i + 1}`, harness, item }));
    const fanJoin = stage.fanOut!.join;
    join = typeof fanJoin === 'string' ? fanJoin : `at_least:${fanJoin.atLeast}`;
  }
  // Refused before the intent: a child that cannot be created would hold the join for ever.
  const unfit = children.find((c) => !TaskId.safeParse(c.taskId).success);
  if (unfit)
    throw new HostError(
      'branch_invalid',
      `child id ${unfit.taskId} is not a Task id (at most 128 characters): give the parent a shorter id`,
    );
  deps.step(
    task,
    `branch ${branchId}: ${children.length} children (${join}): ${children.map((c) => c.taskId).join(', ')}`,
  );
  await task.send({ type: 'branch.open', generation: context.generation, branchId, kind, join, children });
}

/** A harness name as a Task id's part. */
function safe(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 40);
}

/** The items a fan-out makes children of: its list artifact, held as evidence, a JSON array. */
function itemsOf(task: TaskHandle, stage: Stage): string[] {
  const from = stage.fanOut!.from;
  const held = task.context.evidence[from];
  if (!held) throw new HostError('branch_invalid', `stage ${stage.name} fans out over ${from}, which is not held`);
  let list: unknown;
  try {
    list = JSON.parse(task.store.getBlob(held.digest).toString('utf8'));
  } catch {
    list = undefined;
  }
  if (!Array.isArray(list) || list.length === 0 || list.length > 64)
    throw new HostError('branch_invalid', `${from} must be a JSON array of 1 to 64 items`);
  return list.map((item) => (typeof item === 'string' ? item : JSON.stringify(item)).slice(0, 2_000));
}

/**
 * `join`: creates each child that does not exist yet and commits its Assignment, records each
 * child's end, and once the join rule is met (or can no longer be) cancels the children still
 * running, merges the winners' work into this Task's workspace and commits the join. Aborted by a
 * cancel of this Task or a newer Assignment, it cancels the children still running.
 */
export async function joinBranch(deps: FrontierDeps, task: TaskHandle, signal: AbortSignal): Promise<void> {
  const family = familyOf(deps);
  const branch = task.context.branch!;
  const ids = new Set(Object.keys(branch.children));
  let moved = () => {};
  let pending = false;
  // On many Hosts a child may be served by another Host: its commits are asked for too.
  const unsubscribe = family.subscribe(
    (c) => {
      if (!ids.has(c.taskId)) return;
      pending = true;
      moved();
    },
    { remote: (taskId) => ids.has(taskId) },
  );
  try {
    await startChildren(deps, task, family, branch);
    for (;;) {
      pending = false;
      // The handle's context is the one this work started from; the branch as committed since is the Supervisor's.
      const now = () => family.getTask(task.taskId)?.context.branch ?? branch;
      const ended = await endsOf(family, now(), task);
      for (const end of ended) {
        const sent = await task.send(end);
        if (!sent.written) return;
      }
      const current = now();
      const verdict = verdictOf(current);
      if (verdict) return await commitJoin(deps, task, family, current, verdict);
      if (ended.length > 0 || pending) continue;
      await untilAborted(new Promise<void>((resolve) => (moved = resolve)), signal);
    }
  } catch (error) {
    const why = signal.aborted ? (signal.reason as { code?: string })?.code : undefined;
    if (why === 'task_cancelled' || why === 'stale_assignment')
      await cancelOpen(
        family,
        branch,
        `parent ${task.taskId} ${why === 'task_cancelled' ? 'was cancelled' : 'was reassigned'}`,
      );
    throw error;
  } finally {
    unsubscribe();
  }
}

/**
 * Creates each child not yet created (under its id: never twice). A child's spec names its
 * Assignment (`start`), which the Host serving the child commits: this one, or, when this Host
 * died between the two commits, the one that took the child over.
 */
async function startChildren(deps: FrontierDeps, task: TaskHandle, family: TaskFamily, branch: BranchState) {
  const workspace = await deps.workspaceOf(task);
  const stage = assignedStage(task);
  for (const [childId, child] of Object.entries(branch.children)) {
    if (child.status !== 'open') continue;
    let view = await viewOf(family, childId);
    if (!view) {
      try {
        await family.createTask(childSpec(task, stage, branch, childId, child, workspace));
        deps.step(task, `child ${childId} created`);
      } catch (error) {
        if (!(error instanceof HostError && error.code === 'task_exists')) {
          // Said, then thrown: the work is retried, then put to an operator, as any frontier work that fails.
          deps.step(task, `child ${childId} not created: ${error instanceof Error ? error.message : String(error)}`);
          throw error;
        }
      }
      view = family.getTask(childId);
    }
    // A child made before specs named `start` is assigned here, as it then was.
    if (view && !view.spec.start && isTaskState(view.state, 'open')) {
      const spec = view.spec;
      const childStage = stagesOf(spec)[0]!.name;
      await family.send(childId, { type: 'assignment.commit', harness: child.harness, stage: childStage });
      deps.step(task, `child ${childId}: stage ${childStage} assigned to ${child.harness}`);
    }
  }
}

/**
 * A child's spec, deterministic from the parent's: a parallel Attempt is the parent's spec cut to
 * the one stage (proposing completion, its artifacts the required ones), a fan-out child the
 * template with `{{item}}` filled; both seeded from the parent's workspace, labelled with it.
 */
function childSpec(
  task: TaskHandle,
  stage: Stage,
  branch: BranchState,
  childId: string,
  child: BranchState['children'][string],
  workspace: string,
): TaskSpecInput {
  const labels = { [PARENT_LABEL]: task.taskId, [BRANCH_LABEL]: branch.branchId };
  if (branch.kind === 'fanOut') {
    const template = fillItem(stage.fanOut!.spec, child.item ?? '') as Record<string, unknown>;
    const first = (template['stages'] as Array<{ name: string }> | undefined)?.[0]?.name ?? DEFAULT_STAGE;
    return {
      ...(template as TaskSpecInput),
      taskId: childId,
      start: { stage: first, harness: child.harness },
      workspaceSeed: workspace,
      labels: { ...((template['labels'] as Record<string, string> | undefined) ?? {}), ...labels },
    };
  }
  const { taskId: _id, stages: _stages, result, ...rest } = task.spec;
  const { parallel: _p, join: _j, ...single } = stage;
  // The child holds only the stage's artifacts: the parent's evidence its instructions place is
  // placed now, as the parent's Context shows it, so every Attempt is told the same.
  const held = evidenceTexts(task.store, task.spec, task.context);
  const instructions = stage.instructions.replace(TEMPLATE_PLACEHOLDER, (whole, name: string) => {
    if (name === 'evidence') return held.size ? [...held.values()].join('\n') : '(no evidence held yet)';
    if (!name.startsWith('evidence:')) return whole;
    return held.get(name.slice('evidence:'.length)) ?? '(not held)';
  });
  return {
    ...rest,
    taskId: childId,
    title: `${task.spec.title} (${stage.name} on ${child.harness})`.slice(0, 500),
    requiredArtifacts: task.spec.requiredArtifacts.filter((a) => stage.produces.includes(a.name)),
    stages: [{ ...single, instructions: instructions.slice(0, 20_000), proposesCompletion: true }],
    start: { stage: stage.name, harness: child.harness },
    ...(result !== undefined && stage.produces.includes(result) ? { result } : {}),
    workspaceSeed: workspace,
    labels: { ...task.spec.labels, ...labels },
  };
}

/**
 * Records the ends of a joined branch's children that ended after the join and are not recorded
 * yet (retained, `superseded`): the join records them as it commits, and this, at the parent's
 * evaluation, those a crash right after the join's commit left unrecorded.
 */
export async function recordLateEnds(deps: FrontierDeps, task: TaskHandle): Promise<void> {
  const branch = task.context.branch;
  const family = deps.options.tasks?.();
  if (!family || !branch || branch.winners === null || branch.generation !== task.context.generation) return;
  for (const end of await endsOf(family, branch, task)) await task.send(end);
}

/**
 * A child as its last commit left it: from this Host's mirror when served here, else (many Hosts)
 * read from the shared history; undefined while it does not exist.
 */
async function viewOf(family: TaskFamily, childId: string): Promise<TaskView | undefined> {
  return family.getTask(childId) ?? (await family.readTask(childId))?.view;
}

/** The `branch.observe` of each open child that has ended, in the order the children are listed. */
async function endsOf(
  family: TaskFamily,
  branch: BranchState,
  task: TaskHandle,
): Promise<Array<Record<string, unknown>>> {
  const ends: Array<Record<string, unknown>> = [];
  for (const [childId, child] of Object.entries(branch.children)) {
    if (child.status !== 'open') continue;
    const view = await viewOf(family, childId);
    if (!view || !isTaskState(view.state, ...CHILD_ENDS)) continue;
    ends.push(observation(task, branch, childId, view));
  }
  return ends;
}

function observation(task: TaskHandle, branch: BranchState, childId: string, view: TaskView): Record<string, unknown> {
  const verified = isTaskState(view.state, 'completed');
  const rejection = view.context.lastRejection;
  return {
    type: 'branch.observe',
    generation: task.context.generation,
    branchId: branch.branchId,
    child: childId,
    state: view.state,
    verified,
    outcomeDigest: view.context.outcome?.digest ?? null,
    ...(!verified && rejection
      ? { detail: `${rejection.reason}${rejection.detail ? `: ${rejection.detail}` : ''}`.slice(0, 2_000) }
      : {}),
  };
}

/** What the join rule says now: the winners (none: it cannot be met) and why, or null to wait. */
type Verdict = { winners: string[]; reason: string } | { ask: string[] } | null;

function verdictOf(branch: BranchState): Verdict {
  const children = Object.entries(branch.children);
  const verified = children
    .filter(([, c]) => c.status === 'verified')
    .sort(([, a], [, b]) => a.ended! - b.ended!)
    .map(([id]) => id);
  const open = children.filter(([, c]) => c.status === 'open').length;
  const need =
    branch.join === 'first_verified' || branch.join === 'any'
      ? 1
      : branch.join.startsWith('at_least:')
        ? Number(branch.join.slice('at_least:'.length))
        : children.length;
  if (branch.join === 'all' && branch.kind === 'parallel') {
    if (open > 0) return null;
    if (verified.length === 0) return { winners: [], reason: 'no child was verified' };
    if (verified.length === 1) return { winners: verified, reason: `${verified[0]} is the one child verified` };
    // A person is shown the verified Attempts in the order they are listed, not the order they ended.
    return { ask: children.filter(([, c]) => c.status === 'verified').map(([id]) => id) };
  }
  if (verified.length >= need)
    return {
      winners: verified.slice(0, need),
      reason:
        need === 1
          ? `${verified[0]} was verified first`
          : `${need} of ${children.length} children verified (${branch.join})`,
    };
  if (verified.length + open < need)
    return {
      winners: [],
      reason: `${verified.length} of ${children.length} children verified; ${branch.join} needs ${need}`,
    };
  return null;
}

/**
 * Commits the join: a person's pick first when several parallel Attempts were verified under `all`
 * (the DecisionRequest `<branch>/pick`); then the children still running are cancelled, the
 * winners' work merged into this Task's workspace and the join committed with the stage's
 * artifacts it brought. A merge conflict is the join's failure, not a crash.
 */
async function commitJoin(
  deps: FrontierDeps,
  task: TaskHandle,
  family: TaskFamily,
  branch: BranchState,
  verdict: NonNullable<Verdict>,
): Promise<void> {
  let decided: { winners: string[]; reason: string };
  if ('ask' in verdict) {
    const picked = await pickOf(deps, task, branch, verdict.ask);
    if (picked === undefined) return;
    decided = picked;
  } else decided = verdict;
  await cancelOpen(family, branch, `branch ${branch.branchId} joined: ${decided.reason}`);
  const workspace = await deps.workspaceOf(task);
  let merged: string[] = [];
  if (decided.winners.length > 0) {
    try {
      merged = await mergeWorkspaces(
        workspace,
        await Promise.all(decided.winners.map((id) => workOf(deps, family, id))),
      );
    } catch (error) {
      if (!isRuntimeError(error, 'merge_conflict')) throw error;
      decided = { winners: [], reason: `merge_conflict: ${error.message}` };
    }
  }
  const changed = new Map<string, string>();
  const max = deps.options.maxArtifactBytes ?? 1 << 20;
  for (const name of assignedStage(task).produces) {
    if (!merged.includes(name)) continue;
    const read = readArtifact(workspace, name, max);
    changed.set(name, read.ok ? read.value.digest : 'unreadable');
  }
  const { objects, blobs, claims, evidence, refused } = retainEvidence(deps, task, changed, workspace);
  deps.step(
    task,
    decided.winners.length
      ? `join: ${decided.reason}; merged ${merged.length} paths; evidence ${Object.keys(evidence).join(', ') || 'none'}`
      : `join not met: ${decided.reason}`,
  );
  await task.send(
    {
      type: 'branch.join',
      generation: task.context.generation,
      branchId: branch.branchId,
      winners: decided.winners,
      reason: decided.reason.slice(0, 2_000),
      evidence,
      ...(Object.keys(refused).length > 0 ? { refused } : {}),
      merged: merged.slice(0, 100_000),
      sourceDigest: await sourceDigest(workspace, { exclude: deps.artifactNames(task) }),
    },
    { objects, blobs, claims },
  );
  // The children the join cancelled ended after it: their ends are retained, refused `superseded`.
  const joined = family.getTask(task.taskId)?.context.branch;
  if (joined?.branchId === branch.branchId) for (const end of await endsOf(family, joined, task)) await task.send(end);
}

/** The person's pick among verified parallel Attempts: opens the request, or reads its answer (undefined while pending). */
async function pickOf(
  deps: FrontierDeps,
  task: TaskHandle,
  branch: BranchState,
  verified: string[],
): Promise<{ winners: string[]; reason: string } | undefined> {
  const requestId = `${branch.branchId}/pick`;
  const request = task.context.requests[requestId];
  if (request?.status === 'answered' && request.answer)
    return { winners: [request.answer], reason: `${request.answer} picked by a person (${requestId})` };
  if (request && request.status !== 'pending')
    return { winners: [], reason: `the pick ${requestId} was ${request.status}` };
  if (request) return undefined;
  const outcomes = verified.map((id) => `${id}: outcome ${branch.children[id]!.outcomeDigest}`);
  await openDecisionRequest(deps, task, 'operator', {
    requestId,
    pendingAction: `take one verified Attempt of stage ${assignedStage(task).name} into task ${task.taskId}`,
    participant: 'operator',
    alternatives: verified.map((id) => ({
      id,
      summary: `the work of ${id} (harness ${branch.children[id]!.harness}), verified`,
    })),
    evidence: outcomes,
    unresolvedClaims: [],
    consequence: "the picked Attempt's work is merged into the Task's workspace; the others are kept, not used",
    reversibility: 'reversible',
    authority: 'a person who reviews the verified Attempts',
    budgetImpact: 'none known',
    revokedWhen: ['a new Assignment generation'],
    costOfDelay: 'the Task waits',
    allowed: verified,
    ttlMs: null,
  });
  return undefined;
}

/**
 * Where a child's work is and what it changed: the workspace of its last observed run and the
 * paths the runs there changed or removed, from the Runtime's records (every Host's, on many
 * Hosts). A run on another Host left its files on that Host's disk: a workspace this Host cannot
 * read is `merge_conflict`, never merged as if its files were gone.
 */
async function workOf(
  deps: FrontierDeps,
  family: TaskFamily,
  childId: string,
): Promise<{ workspace: string; paths: string[] }> {
  const events = family.getTask(childId) ? family.events(childId) : ((await family.readTask(childId))?.events ?? []);
  const runs: Array<{ workspace: string; paths: string[] }> = [];
  for (const event of events) {
    if (event.type !== 'run.observe') continue;
    const requestId = (event.data as { clientRequestId: string }).clientRequestId;
    for (const job of await deps.options.runtime.findJobs({ clientRequestId: requestId }))
      runs.push({
        workspace: job.workspace,
        paths: [...(job.files?.changed ?? []).map((f) => f.name), ...(job.files?.deleted ?? [])],
      });
  }
  const workspace = runs.at(-1)?.workspace ?? workspacePath(deps.options.workspaces, childId, 1);
  if (!existsSync(workspace))
    throw new RuntimeError(
      'merge_conflict',
      `the workspace of ${childId} (${workspace}) is not on this Host's machine`,
    );
  const paths = new Set(runs.filter((r) => r.workspace === workspace).flatMap((r) => r.paths));
  return { workspace, paths: [...paths].sort() };
}

/** Cancels every child of the branch that has not ended (a child already over refuses nothing: it is left). */
async function cancelOpen(family: TaskFamily, branch: BranchState, reason: string): Promise<void> {
  for (const [childId, child] of Object.entries(branch.children)) {
    if (child.status !== 'open') continue;
    const view = await viewOf(family, childId);
    if (!view || isTaskState(view.state, 'completed', 'cancelled')) continue;
    try {
      await family.send(childId, { type: 'task.cancel', reason: reason.slice(0, 2_000) });
    } catch (error) {
      // Served by another Host: that Host cancels it, following this parent's commits (watchParent).
      if (!(error instanceof HostError && error.code === 'task_elsewhere')) throw error;
    }
  }
}

/**
 * Whether a child Task may go on: false (and the child is cancelled) when its parent was
 * cancelled, was reassigned, or joined without it. A crash between the parent's commit and the
 * cancel of its children leaves them to find this out themselves, before they dispatch or while
 * they observe their run.
 */
export async function parentLets(deps: FrontierDeps, task: TaskHandle): Promise<boolean> {
  const parentId = task.spec.labels[PARENT_LABEL];
  if (parentId === undefined) return true;
  const family = deps.options.tasks?.();
  const parent = family && (await viewOf(family, parentId));
  if (!parent) return true;
  const branch = parent.context.branch;
  const mine = branch?.branchId === task.spec.labels[BRANCH_LABEL] ? branch?.children[task.taskId] : undefined;
  const why = isTaskState(parent.state, 'cancelled')
    ? `parent ${parentId} was cancelled`
    : !mine
      ? `parent ${parentId} left branch ${task.spec.labels[BRANCH_LABEL]}`
      : branch!.winners !== null && !branch!.winners.includes(task.taskId)
        ? `parent ${parentId} joined without it`
        : null;
  if (why === null) return true;
  deps.step(task, `${why}: cancelling`);
  await task.send({ type: 'task.cancel', reason: why });
  return false;
}

/**
 * While a child's run goes on, follows its parent's commits (another Host's too) and cancels the
 * child once the parent moved on without it (`parentLets`): a parent served elsewhere cannot send
 * the cancel itself. Answers the unsubscribe function.
 */
export function watchParent(deps: FrontierDeps, task: TaskHandle): () => void {
  const parentId = task.spec.labels[PARENT_LABEL];
  const family = deps.options.tasks?.();
  if (parentId === undefined || !family) return () => {};
  // One check at a time; a commit heard during one is checked after it (it may be the join).
  let checking: Promise<void> | undefined;
  let again = false;
  // Over once the watch ends or the child was cancelled: no second cancel.
  let over = false;
  const check = (): void => {
    if (over) return;
    if (checking) {
      again = true;
      return;
    }
    checking = parentLets(deps, task)
      .then((lets) => void (over ||= !lets))
      .catch((error: unknown) => deps.step(task, `parent ${parentId} not read: ${(error as Error).message}`))
      .finally(() => {
        checking = undefined;
        if (again) {
          again = false;
          check();
        }
      });
  };
  const unsubscribe = family.subscribe((c) => c.taskId === parentId && check(), {
    remote: (taskId) => taskId === parentId,
  });
  return () => {
    over = true;
    unsubscribe();
  };
}
