import type { RevokedBy, StaleSource, TaskContext } from '../machines/index.js';
import { DecisionRequestObject, type CandidateAction } from '../objects/index.js';
import type { EventStore } from '../store/index.js';
import type { EventInput } from './event-input.js';
import { contextOf } from './compiled-contexts.js';
import { staleSources, type ObservationReader, type SourceReader } from '../readsets/index.js';
import { revocationOf } from './requests/request-revocation.js';

/**
 * What the kernel establishes about an event made against a Context before the statechart takes
 * it: what moved in that Context's read set and, for a decision, whether the Context is this
 * Task's, its generation and the chosen candidate's authority. They are written into the event, so
 * the statechart's guards read only event data and a replay decides as the first admission did.
 */
export interface AdmissionFacts {
  stale: StaleSource[];
  known?: boolean;
  generation?: number;
  authority?: 'trusted' | 'untrusted' | null;
  /** Whether the chosen candidate's stage puts it to a person for lack of trusted authority (a decision). */
  ask?: boolean;
  /** The chosen candidate's action kind (a decision). */
  action?: CandidateAction['kind'] | null;
  /** The Host's clock, epoch ms (an answer: expiry is decided on it). */
  now?: number;
  /** Whether the answer is one the request takes (an answer). */
  allowed?: boolean;
  /** What revoked the request an answer names, found in the journal (a revoked request). */
  revokedBy?: RevokedBy;
  /** The Host's harnesses, when an Assignment names none of them (written into the event: it is retained, `harness_unknown`). */
  harnesses?: string[];
}

/** Where an event's facts are found: the Task's store, its committed context and the Host's clock and harnesses. */
export interface AdmissionScope {
  store: EventStore;
  taskId: string;
  context: TaskContext;
  /** Reads the world; without it only the Goal is re-validated. */
  read: SourceReader | undefined;
  /** The Host's clock, epoch ms. */
  now: number;
  harnesses?: readonly string[] | undefined;
  /** Re-reads the chosen candidate's Effect observation when a decision is admitted. */
  observe?: ObservationReader | undefined;
}

/** Events whose admission depends on the Context they were made against. */
const READ_SET_EVENTS: ReadonlySet<string> = new Set([
  'run.observe',
  'completion.propose',
  'verification.record',
  'decision.submit',
]);

/**
 * Re-validates the read set of the Context `input` was made against, when it is the current one
 * (an event naming another Context is the statechart's to reject). Reads the world through `read`
 * (the Host's effects know where the workspace and the world are); without it only the Goal.
 */
export async function admissionFacts(input: EventInput, scope: AdmissionScope): Promise<AdmissionFacts | undefined> {
  const { store, taskId, context, read, harnesses, observe } = scope;
  if (input.type === 'assignment.commit')
    return harnesses && !harnesses.includes(input.harness) ? { stale: [], harnesses: [...harnesses] } : undefined;
  if (input.type === 'request.answer') return answerFacts(input, scope);
  if (!READ_SET_EVENTS.has(input.type)) return undefined;
  const named = ('contextDigest' in input && input.contextDigest) || context.contextDigest;
  const current = named !== null && named === context.contextDigest;
  if (input.type !== 'decision.submit') {
    const readSet = current ? contextOf(store, taskId, named)?.readSet : undefined;
    return { stale: readSet ? await staleSources(readSet, context.goal, read) : [] };
  }
  const compiled = contextOf(store, taskId, input.contextDigest);
  if (!compiled) return { stale: [], known: false, generation: 0, authority: null };
  const candidate = compiled.readSet?.candidates.find((c) => c.id === input.candidateId);
  const observing = observe && candidate ? { reader: observe, candidateId: candidate.id } : undefined;
  const stale =
    current && candidate && compiled.readSet ? await staleSources(compiled.readSet, context.goal, read, observing) : [];
  const facts: AdmissionFacts = {
    stale,
    known: true,
    generation: compiled.generation,
    authority: candidate?.authority ?? null,
    action: candidate?.action.kind ?? null,
  };
  // Written only where it applies, so decisions on other stages keep the shape they had.
  if (candidate?.authority === 'untrusted' && compiled.readSet?.untrustedAuthority === 'ask') facts.ask = true;
  return facts;
}

/**
 * An answer to a DecisionRequest: the Host's clock, whether the request takes the answer, and
 * what moved in the world the request is bound to (the read set of its Context, re-read). An
 * answer naming no request of this Task gets empty facts (the statechart refuses it).
 */
async function answerFacts(
  input: Extract<EventInput, { type: 'request.answer' }>,
  { store, taskId, context, read, now }: AdmissionScope,
): Promise<AdmissionFacts> {
  const held = Object.hasOwn(context.requests, input.requestId) ? context.requests[input.requestId] : undefined;
  if (!held) return { stale: [], now, allowed: false };
  const request = DecisionRequestObject.parse(store.getObject(held.digest, 'decision-request').body);
  const allowed = request.allowed.includes(input.answer);
  // Only a pending request bound to the current Context is re-read: any other is refused on its status.
  const readSet =
    held.status === 'pending' && held.contextDigest !== null && held.contextDigest === context.contextDigest
      ? contextOf(store, taskId, held.contextDigest)?.readSet
      : undefined;
  const facts: AdmissionFacts = { stale: readSet ? await staleSources(readSet, context.goal, read) : [], now, allowed };
  if (held.status === 'revoked') {
    const journal = (function* () {
      for (const { revision, event } of store.stream(taskId)) yield { revision, ...event };
    })();
    const revokedBy = revocationOf(journal, input.requestId);
    if (revokedBy) facts.revokedBy = revokedBy;
  }
  return facts;
}
