import { and as xstateAnd, not as xstateNot, or as xstateOr } from 'xstate';
import type { TaskMachineContext } from './task-context.js';
import type { TaskEvent } from './task-events.js';
import { generationOf, missingEvidence, requestOf, staleOf } from './rejection-detail.js';

type Args = { context: TaskMachineContext; event: TaskEvent };

/**
 * The Task statechart's guards (task-machine.ts): each reads the context and what the event
 * carries, nothing else, so a replay decides as the first admission did.
 */
export const TASK_GUARDS = {
  fromHost: ({ event }: Args) => event.origin === 'host',
  currentGeneration: ({ context, event }: Args) => generationOf(event) === context.generation,
  staleGeneration: ({ context, event }: Args) => {
    const generation = generationOf(event);
    return generation !== undefined && generation < context.generation;
  },
  nextGeneration: ({ context, event }: Args) => generationOf(event) === context.generation + 1,
  // `a+b+c` names parallel Attempts: each harness must be known.
  harnessUnknown: ({ event }: Args) =>
    event.type === 'assignment.commit' &&
    event.harnesses !== undefined &&
    event.harness.split('+').some((name) => !event.harnesses!.includes(name)),
  branchNew: ({ context, event }: Args) =>
    event.type === 'branch.open' && context.branch?.generation !== event.generation,
  sameBranch: ({ context, event }: Args) =>
    'branchId' in event && context.branch !== null && context.branch.branchId === event.branchId,
  childOpen: ({ context, event }: Args) =>
    event.type === 'branch.observe' && context.branch?.children[event.child]?.status === 'open',
  // Only children whose end was observed verified can be taken by the join.
  winnersVerified: ({ context, event }: Args) =>
    event.type === 'branch.join' &&
    event.winners.length > 0 &&
    event.winners.every((id) => context.branch?.children[id]?.status === 'verified'),
  sameRequest: ({ context, event }: Args) =>
    'clientRequestId' in event && context.dispatch?.clientRequestId === event.clientRequestId,
  oneJob: ({ event }: Args) => event.type === 'dispatch.reconcile' && event.jobIds.length === 1,
  manyJobs: ({ event }: Args) => event.type === 'dispatch.reconcile' && event.jobIds.length > 1,
  contextMatches: ({ context, event }: Args) =>
    'contextDigest' in event && event.contextDigest === context.contextDigest,
  evidenceComplete: ({ context, event }: Args) =>
    event.type === 'completion.propose' && missingEvidence(context, event.evidence).length === 0,
  passed: ({ event }: Args) => event.type === 'verification.record' && event.passed && event.outcomeDigest !== null,
  stale: ({ event }: Args) => staleOf(event).length > 0,
  contextKnown: ({ event }: Args) => event.type === 'decision.submit' && event.known,
  decided: ({ context, event }: Args) =>
    event.type === 'decision.submit' && context.decision?.contextDigest === event.contextDigest,
  candidateKnown: ({ event }: Args) => event.type === 'decision.submit' && event.authority !== null,
  trustedAuthority: ({ event }: Args) => event.type === 'decision.submit' && event.authority === 'trusted',
  asksAuthority: ({ event }: Args) => event.type === 'decision.submit' && event.ask === true,
  actionOk: ({ event }: Args) => event.type === 'action.record' && event.ok,
  sameEffect: ({ context, event }: Args) => 'requestId' in event && context.effect?.requestId === event.requestId,
  reconcileByHost: ({ context }: Args) => context.effect?.reconcile === 'host',
  refusesStale: ({ event }: Args) => event.type === 'effect.refuse' && event.code === 'context_stale',
  oneReceipt: ({ event }: Args) => event.type === 'effect.reconcile' && event.receiptDigests.length === 1,
  manyReceipts: ({ event }: Args) => event.type === 'effect.reconcile' && event.receiptDigests.length > 1,
  // While an Effect is unknown nothing may perform another or declare it failed: only a lookup can tell.
  effectBlocks: ({ context, event }: Args) =>
    event.type === 'decision.submit' &&
    context.effect?.status === 'unknown' &&
    (event.action === 'effect' || event.action === 'abandon'),
  requestNew: ({ context, event }: Args) => 'requestId' in event && !Object.hasOwn(context.requests, event.requestId),
  requestKnown: ({ context, event }: Args) => requestOf(context, event) !== undefined,
  requestPending: ({ context, event }: Args) => requestOf(context, event)?.status === 'pending',
  requestAnswered: ({ context, event }: Args) => requestOf(context, event)?.status === 'answered',
  requestRevoked: ({ context, event }: Args) => requestOf(context, event)?.status === 'revoked',
  // Decided on the clock reading the kernel wrote into the event, so replay decides the same way.
  requestExpired: ({ context, event }: Args) => {
    const request = requestOf(context, event);
    if (request?.status === 'expired') return true;
    const now = 'now' in event ? event.now : undefined;
    return request?.status === 'pending' && request.expiresAt !== null && now !== undefined && now >= request.expiresAt;
  },
  requestStale: ({ context, event }: Args) => {
    const request = requestOf(context, event);
    return (
      staleOf(event).length > 0 || (request?.contextDigest != null && request.contextDigest !== context.contextDigest)
    );
  },
  answerAllowed: ({ event }: Args) => event.type === 'request.answer' && event.allowed,
  effectRequest: ({ context, event }: Args) => requestOf(context, event)?.about === 'effect',
  authorityRequest: ({ context, event }: Args) => requestOf(context, event)?.about === 'authority',
  answersApprove: ({ event }: Args) => event.type === 'request.answer' && event.answer === 'approve',
  answersReconcile: ({ event }: Args) => event.type === 'request.answer' && event.answer === 'reconcile',
  answersAbandon: ({ event }: Args) => event.type === 'request.answer' && event.answer === 'abandon',
} satisfies Record<string, (args: Args) => boolean>;

/** How a combined guard was built: which combinator, over which guards (names or combined guards). */
export interface GuardShape {
  kind: 'and' | 'or' | 'not';
  parts: readonly unknown[];
}

// XState keeps a combinator's operands in fields of its own; the graph reads them from here instead.
const SHAPES = new WeakMap<object, GuardShape>();

function shaped<G extends object>(guard: G, shape: GuardShape): G {
  SHAPES.set(guard, shape);
  return guard;
}

/** The shape of a guard built with this module's `and`, `or` or `not`; undefined for any other. */
export function guardShape(guard: unknown): GuardShape | undefined {
  return typeof guard === 'function' ? SHAPES.get(guard) : undefined;
}

/** XState's `and`, remembering its operands (`guardShape`). */
export const and = ((guards: readonly unknown[]) =>
  shaped(xstateAnd(guards as never), { kind: 'and', parts: guards })) as typeof xstateAnd;

/** XState's `or`, remembering its operands (`guardShape`). */
export const or = ((guards: readonly unknown[]) =>
  shaped(xstateOr(guards as never), { kind: 'or', parts: guards })) as typeof xstateOr;

/** XState's `not`, remembering its operand (`guardShape`). */
export const not = ((guard: unknown) =>
  shaped(xstateNot(guard as never), { kind: 'not', parts: [guard] })) as typeof xstateNot;
