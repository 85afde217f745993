import { and, not, or } from './task-guards.js';

// The transition lists more than one state (or the root) takes, as the statechart in task-machine.ts
// names them; their guards and actions are task-guards.ts' and task-actions.ts'. Host-only events
// check no origin: the kernel refuses them from outside before the machine sees them
// (`not_allowed`), so `fromHost` guards only an event that both the Host and a caller may send.

/**
 * How a decision on the current Context is taken (evaluating, waiting): an unknown Context is a
 * mismatch, an earlier or already-decided one superseded (both retained where they are); an
 * invented candidate or one without trusted authority leaves the Task waiting with nothing done,
 * unless its stage puts such a candidate to a person (`authorizing`, still retained
 * `untrusted_authority`); a moved read set makes the Assignment stale; otherwise the Host acts on
 * the candidate.
 */
export const DECISION = [
  { guard: not('contextKnown'), actions: 'rejectContext' },
  { guard: or([not('contextMatches'), 'decided']), actions: 'rejectSuperseded' },
  { guard: not('candidateKnown'), target: '#task.waiting', actions: 'rejectCandidate' },
  { guard: 'stale', target: '#task.stale', actions: 'rejectStaleContext' },
  {
    guard: and([not('trustedAuthority'), 'asksAuthority', not('effectBlocks')]),
    target: '#task.authorizing',
    actions: ['rejectAuthority', 'askAuthority'],
  },
  { guard: not('trustedAuthority'), target: '#task.waiting', actions: 'rejectAuthority' },
  { guard: 'effectBlocks', target: '#task.waiting', actions: 'rejectEffectUnknown' },
  { target: '#task.acting', actions: 'decide' },
] as const;

/**
 * How an answer to a DecisionRequest is refused, in order (each retained with its code, the
 * request consumed at most once): unknown, already consumed, past its deadline (marking it
 * expired), revoked, bound to a world or Context that moved (marking it revoked), or not one of
 * its answers. An answer passing all of them is admitted.
 */
export const ANSWER_REFUSALS = [
  { guard: not('requestKnown'), actions: 'rejectRequestUnknown' },
  { guard: 'requestAnswered', actions: 'rejectNotPending' },
  { guard: 'requestExpired', actions: ['expireRequest', 'rejectExpired'] },
  { guard: 'requestRevoked', actions: 'rejectRevoked' },
  { guard: 'requestStale', actions: ['revokeRequest', 'rejectRequestStale'] },
  { guard: not('answerAllowed'), actions: 'rejectAnswer' },
] as const;

/**
 * How the answer to the request about a candidate's authority is taken (`authorizing.held`): past
 * its deadline the Task waits; bound to a world that moved, the stage reruns; `approve` performs
 * the held decision, any other allowed answer leaves the Task waiting. Answers to the Task's other
 * requests are taken as anywhere else.
 */
export const AUTHORITY_ANSWER = [
  {
    guard: and(['authorityRequest', 'requestPending', 'requestExpired']),
    target: '#task.waiting',
    actions: ['expireRequest', 'rejectExpired', 'dropAsked'],
  },
  {
    guard: and(['authorityRequest', 'requestPending', 'requestStale']),
    target: '#task.stale',
    actions: ['revokeRequest', 'rejectRequestStale', 'dropAsked'],
  },
  {
    guard: and(['authorityRequest', 'requestPending', 'answerAllowed', 'answersApprove']),
    target: '#task.acting',
    actions: ['answerRequest', 'approveAsked'],
  },
  {
    guard: and(['authorityRequest', 'requestPending', 'answerAllowed']),
    target: '#task.waiting',
    actions: ['answerRequest', 'dropAsked'],
  },
  ...ANSWER_REFUSALS,
  { actions: 'answerRequest' },
] as const;

/**
 * An Assignment, of the next generation, naming a harness the Host that admitted it does not run:
 * retained where the Task is (it would wait at dispatch forever), refused `harness_unknown`.
 */
export const UNKNOWN_HARNESS = { guard: and(['nextGeneration', 'harnessUnknown']), actions: 'rejectHarness' } as const;

/**
 * A new Assignment, of the next generation, taken where the Task may be reassigned: it enters
 * `assigned` afresh, and whatever the previous generation still has in flight is stale.
 * The states that take it are siblings of those that may not (`new`, `effecting`, `verifying`,
 * `blocked`, the final ones), so it is named once here rather than on a parent: a parent of its
 * own would change every stored state value.
 */
export const REASSIGN = [
  UNKNOWN_HARNESS,
  { guard: 'nextGeneration', target: '#task.assigned', actions: 'commitAssignment' },
] as const;

/**
 * What a lookup of the Effect's request id found: one receipt records it, more than one blocks
 * the Task (fail-closed, as for dispatch), none leaves it unknown and asks an operator.
 */
export const EFFECT_RECONCILE = [
  { guard: and(['sameEffect', 'oneReceipt']), target: '#task.evaluating', actions: 'recordEffect' },
  { guard: and(['sameEffect', 'manyReceipts']), target: '#task.blocked', actions: 'rejectIdentity' },
  { guard: 'sameEffect', target: '#task.effect_unknown.escalating' },
] as const;

/** A receipt, from `perform` or a lookup, for other input than the intent's: fail-closed, as for many. */
export const EFFECT_CONFLICT = { guard: 'sameEffect', target: '#task.blocked', actions: 'rejectIdentity' } as const;

/**
 * The Host's own submission of its provider's decision leaves `evaluating` whatever it named: a
 * decision that cannot be taken leaves the Task waiting for the next Assignment (it would
 * otherwise be evaluated, and refused, again).
 */
export const EVALUATED_DECISION = [
  { guard: and(['fromHost', not('contextKnown')]), target: '#task.waiting', actions: 'rejectContext' },
  {
    guard: and(['fromHost', or([not('contextMatches'), 'decided'])]),
    target: '#task.waiting',
    actions: 'rejectSuperseded',
  },
  ...DECISION,
] as const;
