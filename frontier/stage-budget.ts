import type { Stage } from '../objects/index.js';
import { type TaskHandle, REVOKED_WITH_CONTEXT, openDecisionRequest } from '../kernel/index.js';
import type { FrontierDeps } from './work-options.js';
import { assignStageAgain } from './stage-retry.js';

/** The answers a person gives when a stage's run went over its budget and the spec says `ask`. */
export const BUDGET_ANSWERS = ['continue', 'settle'] as const;

/** The request asking a person whether a stage over its budget goes on: one per generation. */
export function budgetRequestId(task: Pick<TaskHandle, 'taskId' | 'context'>): string {
  const { attempt, generation } = task.context;
  return `${task.taskId}/a${attempt}/g${generation}/budget`;
}

/**
 * Whether the Task waits for a person to answer its current generation's budget request (its
 * stage's run went over `budget.tokens` or `budget.turns`): it rests in `evaluating` until then.
 */
export function budgetAsked(task: Pick<TaskHandle, 'taskId' | 'context'>): boolean {
  return task.context.requests[budgetRequestId(task)]?.status === 'pending';
}

/** What a Loop v0 receipt says a run spent; the loop's totals count its whole conversation. */
interface LoopReceipt {
  stopReason: string;
  usage?: { inputTokens?: number; outputTokens?: number; turns?: number };
}

/** The stop reasons of a Loop v0 run over its stage's budget (drivers/loop/step-log.ts `STAGE_BUDGET_ENDS`). */
const OVER = { stage_token_budget: 'tokens', stage_turn_budget: 'turns' } as const;

/** The receipt of the current generation's run, when the Task observed one. */
function currentReceipt(task: TaskHandle): LoopReceipt | undefined {
  let digest: string | undefined;
  for (const { event } of task.store.stream(task.taskId))
    if (event.type === 'run.observe' && event.disposition.admitted && event.data.generation === task.context.generation)
      digest = event.data.receiptDigest as string;
  return digest === undefined ? undefined : task.store.getObject<LoopReceipt>(digest, 'receipt').body;
}

/**
 * `evaluate` of a stage whose run went over its `budget.tokens` or `budget.turns` with
 * `onExceeded: 'ask'` (docs/stages.md, "Budgets"): opens the DecisionRequest
 * `<task>/a<attempt>/g<generation>/budget` and waits for its answer; `continue` commits the next
 * generation of the Assignment, whose loop takes the conversation up where it stopped with the
 * stage's budget afresh; `settle` (or an expired or revoked request) lets the stage settle as a run
 * over its budget does without `ask`. Returns false when there is nothing to ask or a person chose
 * to settle (the caller evaluates the stage as usual). The request is derived from the journal: a
 * Host that dies anywhere here opens it once and acts on its answer once.
 */
export async function askOverBudget(deps: FrontierDeps, task: TaskHandle, stage: Stage): Promise<boolean> {
  if (stage.budget?.onExceeded !== 'ask') return false;
  const receipt = currentReceipt(task);
  const over = receipt && (OVER as Record<string, 'tokens' | 'turns' | undefined>)[receipt.stopReason];
  if (over === undefined) return false;
  const requestId = budgetRequestId(task);
  const asked = task.context.requests[requestId];
  if (asked?.status === 'pending') return true;
  if (asked !== undefined && asked.answer !== 'continue') return false;
  if (asked === undefined) {
    const tokens = (receipt!.usage?.inputTokens ?? 0) + (receipt!.usage?.outputTokens ?? 0);
    const spent = `${count(tokens, 'token')} in ${count(receipt!.usage?.turns ?? 0, 'model turn')}`;
    deps.step(task, `run of stage ${stage.name} went over its budget.${over} (${stage.budget[over]}): asking`);
    await openDecisionRequest(deps, task, 'operator', {
      requestId,
      pendingAction: `continue stage ${stage.name} under generation ${task.context.generation + 1}`,
      participant: 'operator',
      alternatives: [
        {
          id: 'continue',
          summary: `dispatch stage ${stage.name} again under a new generation: it goes on where it stopped, its budget afresh`,
        },
        { id: 'settle', summary: 'let the stage settle as a run over its budget; the Task waits for a new Assignment' },
      ],
      evidence: [
        `the run stopped over the stage's budget.${over} of ${stage.budget[over]}`,
        `its conversation spent ${spent}`,
      ],
      unresolvedClaims: ['whether the stage is worth what more it will spend'],
      consequence: `stage ${stage.name} may spend up to its budget again`,
      reversibility: 'irreversible',
      authority: 'a person who may spend the stage budget again',
      budgetImpact:
        `spent so far: ${spent}; continuing allows` +
        [
          stage.budget.tokens !== undefined ? ` ${count(stage.budget.tokens, 'token')}` : '',
          stage.budget.turns !== undefined ? ` ${count(stage.budget.turns, 'model turn')}` : '',
        ]
          .filter(Boolean)
          .join(' and') +
        ' more',
      revokedWhen: REVOKED_WITH_CONTEXT,
      costOfDelay: 'the Task waits',
      allowed: [...BUDGET_ANSWERS],
      ttlMs: null,
    });
    return true;
  }
  const { result, stage: name } = await assignStageAgain(task);
  deps.step(
    task,
    `stage ${name} goes on over its budget (a person answered continue): dispatched again as generation ${task.context.generation + 1}` +
      (result.admitted ? '' : ` (refused: ${result.code})`),
  );
  return true;
}

/** `1 token`, `2 tokens`. */
function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
