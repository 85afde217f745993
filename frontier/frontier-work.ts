import type { FrontierWork } from '../machines/index.js';
import { sourceDigest } from '../runtime/index.js';
import { sourcesOf } from '../objects/index.js';
import { compileContext } from './context-compiler.js';
import { act, askAuthority, rerun, submitStageDecision } from './decisions.js';
import { confirmEffect, escalateEffect, reconcileEffect } from './effect-actions.js';
import { readSource, type SourceRead, type FrontierRunner, type TaskHandle, assignedStage } from '../kernel/index.js';
import { dispatchRun, reconcileRun } from './dispatch-run.js';
import { frontierDeps, type FrontierDeps, type FrontierWorkOptions } from './work-options.js';
import { observeRun } from './observe-run.js';
import { verifyAcceptance } from './verify-acceptance.js';
import { candidateObservations, observationReader } from './effect-observations.js';
import { retryStoppedRun } from './stage-retry.js';
import { askOverBudget } from './stage-budget.js';
import { joinBranch, recordLateEnds } from './branch.js';

export { clientRequestId, type HarnessConfig, type HarnessFactory, type FrontierWorkOptions } from './work-options.js';

/**
 * The Host's frontier work (docs/design.md, "Where the Host acts", invariants 1–5), performed after each commit:
 *
 * - `compile_context`: compile and commit the Context before any provider runs;
 * - `dispatch`: persist the intent with its clientRequestId, then call the Runtime; a response
 *   that does not come back makes the dispatch `unknown` (never a blind redispatch);
 * - `reconcile`: look the job up by that exact id: one → running, none → stays unknown, more →
 *   blocked (`identity_conflict`);
 * - `observe_run`: wait for the job, keep the receipt, validate the artifacts this run changed
 *   and retain the valid ones as evidence;
 * - `evaluate`: a stage whose run the Host stopped (drain, crash) is dispatched again under the
 *   next generation as its `retry` policy allows, then put to a person (stage-retry.ts); one whose
 *   run went over its `budget` is put to a person when its spec says `ask` (stage-budget.ts); a stage
 *   that does not propose completion settles (the Task waits, recording the
 *   stage's artifacts it does not hold); one that does proposes completion, which the statechart
 *   admits only with every required artifact held;
 * - `verify`: run the acceptance command as a Runtime job, recompute the source digest and the
 *   frozen test digests on the Host, and commit the outcome only if all agree;
 * - `act`: perform the admitted decision's candidate action (decisions.ts);
 * - `escalate_authority`: a chosen candidate without trusted authority, on a stage that puts one
 *   to a person: open the DecisionRequest naming its untrusted sources (decisions.ts);
 * - `rerun`: the Context moved under the Assignment; run its stage again under the next generation;
 * - `join`: a branch stage's children (parallel Attempts, a fan-out) are created, their ends
 *   observed, and the join committed once with the winners' work merged in (branch.ts);
 * - `confirm_effect`, `reconcile_effect`, `escalate_effect`: an Effect whose answer was not
 *   recorded is unknown, looked up by its request id, and put to an operator when nothing is
 *   found (effect-actions.ts).
 *
 * Every step is idempotent: if the process dies anywhere, boot derives the same step from the
 * committed state and the Runtime answers a repeated dispatch with the job it already has.
 */
export function createFrontierWork(options: FrontierWorkOptions): FrontierRunner {
  const deps = frontierDeps(options);
  return {
    async perform(task: TaskHandle, work: FrontierWork, signal: AbortSignal): Promise<void> {
      switch (work) {
        case 'compile_context':
          return compile(deps, task);
        case 'dispatch':
          return dispatchRun(deps, task);
        case 'confirm_dispatch':
          return void (await task.send({
            type: 'dispatch.lost',
            clientRequestId: task.context.dispatch!.clientRequestId,
          }));
        case 'reconcile':
          return reconcileRun(deps, task);
        case 'observe_run':
          return observeRun(deps, task, signal);
        case 'evaluate':
          return evaluate(deps, task, signal);
        case 'verify':
          return verifyAcceptance(deps, task, signal);
        case 'act':
          return act(deps, task, signal);
        case 'rerun':
          return rerun(deps, task);
        case 'confirm_effect':
          return confirmEffect(deps, task);
        case 'reconcile_effect':
          return reconcileEffect(deps, task);
        case 'escalate_effect':
          return escalateEffect(deps, task);
        case 'escalate_authority':
          return askAuthority(deps, task);
        case 'join':
          return joinBranch(deps, task, signal);
        case 'none':
          return;
      }
    },
    harnesses: Object.keys(options.harnesses),
    readObservation: observationReader(options.effectAdapters),
    step: (taskId: string, text: string) => options.onStep?.(taskId, text),
  };
}

/** `compile_context`: compiles and commits the Context before any provider runs. */
async function compile(deps: FrontierDeps, task: TaskHandle): Promise<void> {
  const workspace = await deps.workspaceOf(task);
  const sources = new Map<string, SourceRead | null>();
  for (const source of sourcesOf(task.spec))
    sources.set(source.id, await readSource({ workspace, world: task.spec.world }, source));
  const stage = assignedStage(task);
  const observations = await candidateObservations(deps.options.effectAdapters, stage).catch((error: unknown) => {
    deps.step(
      task,
      `observing an Effect's endpoint failed (${error instanceof Error ? error.message : error}); no Context compiled`,
    );
    throw error;
  });
  const compiled = compileContext(task.store, task.spec, task.context, stage, {
    workspaceDigest: await sourceDigest(workspace, { exclude: deps.artifactNames(task) }),
    sources,
    ...(observations.size ? { observations } : {}),
  });
  const { items, candidates } = compiled.body;
  const trusted = items.filter((i) => i.trust === 'trusted').length;
  deps.step(
    task,
    `context compiled for generation ${task.context.generation} (${items.length} items, ${trusted} trusted` +
      `${candidates.length ? `, ${candidates.length} candidates` : ''})`,
  );
  await task.send(
    {
      type: 'context.compile',
      generation: task.context.generation,
      contextDigest: compiled.digest,
      promptDigest: compiled.prompt.digest,
    },
    {
      objects: [
        { kind: 'context', body: compiled.body },
        { kind: 'prompt', body: compiled.prompt.body },
      ],
    },
  );
}

/**
 * `evaluate`: a stage whose run the Host stopped is retried as its policy allows
 * (`retryStoppedRun`); one over its budget is put to a person when its spec asks (`askOverBudget`); a stage that does not propose completion settles (the Task waits for the next
 * Assignment), naming the artifacts it was to write and did not; one that does proposes completion
 * from the evidence held.
 */
async function evaluate(deps: FrontierDeps, task: TaskHandle, signal: AbortSignal): Promise<void> {
  const { context } = task;
  const stage = assignedStage(task);
  await recordLateEnds(deps, task);
  if (await retryStoppedRun(deps, task, stage, signal)) return;
  if (await askOverBudget(deps, task, stage)) return;
  if (await submitStageDecision(deps, task, stage)) return;
  if (!stage.proposesCompletion) {
    const missing = stage.produces.filter((name) => context.evidence[name]?.generation !== context.generation);
    deps.step(
      task,
      missing.length ? `stage ${stage.name} settled without ${missing.join(', ')}` : `stage ${stage.name} settled`,
    );
    await task.send({
      type: 'evaluation.settle',
      generation: context.generation,
      ...(missing.length ? { missing } : {}),
    });
    return;
  }
  const evidence = Object.fromEntries(Object.entries(context.evidence).map(([name, held]) => [name, held.digest]));
  const result = await task.send({
    type: 'completion.propose',
    generation: context.generation,
    contextDigest: context.contextDigest!,
    evidence,
    proposer: `host:${context.assignment?.harness}`,
    summary: 'proposed by the Host from the evidence it holds',
  });
  deps.step(
    task,
    result.admitted
      ? 'completion proposed and admitted: verifying'
      : `completion proposal rejected: ${result.code}${result.detail ? ` (${result.detail})` : ''}`,
  );
}
