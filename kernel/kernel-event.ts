import { randomUUID } from 'node:crypto';
import { claimsOf, refsOf, type EventOrigin, type TaskContext, type TaskEvent } from '../machines/index.js';
import type { AppendInput, EventDisposition, IndexClaim, NewObject, PreparedObject } from '../store/index.js';
import type { Clock } from './clock.js';
import { fingerprint, type EventInput, type Refusal } from './event-input.js';
import { dataOf } from '../objects/index.js';
import type { TaskSpec } from '../objects/index.js';
import { resolveStage } from './stages.js';
import type { AdmissionFacts } from './admission-facts.js';

/** Where a sent event is taken: its Task, the committed context, and the revision the event will occupy. */
export interface KernelFacts {
  taskId: string;
  context: TaskContext;
  revision: number;
  origin: EventOrigin;
  /** Digests an object body the way the store will write it (`EventStore.prepareObject`). */
  prepareObject: (object: NewObject) => PreparedObject;
  /** The Task's spec, which an Assignment's stage must name (absent for a bare kernel: not checked). */
  spec?: TaskSpec | undefined;
  /** What the kernel found when it re-validated the event's Context (`admissionFacts`). */
  facts?: AdmissionFacts | undefined;
}

/** A sent event as the kernel takes it: the statechart's event and the objects written with it. */
export interface KernelEvent {
  event: TaskEvent;
  /** Objects the kernel writes for the event (their digests are in it), in the same commit. */
  prepared: PreparedObject[];
}

/**
 * Completes what a caller sent into the statechart's event: adds the revision and origin, for
 * the events whose objects only the kernel writes (assignment, proposal, goal, decision) writes
 * them and names their digests, and adds what admission found about the event's Context
 * (`facts`: what moved, for a decision its Context and candidate, for an answer to a
 * DecisionRequest the Host's clock and whether the request takes it). An Assignment takes the
 * next generation only (`generation_mismatch` for another fence) and names one of the spec's
 * stages (`stage_unknown`); a Goal revision takes the next revision only
 * (`goal_revision_mismatch`); a proposal made without naming its Context names the current one.
 */
export function kernelEvent(input: EventInput, at: KernelFacts): KernelEvent | { refusal: Refusal } {
  const { taskId, context, revision, origin } = at;
  switch (input.type) {
    case 'assignment.commit': {
      const generation = input.generation ?? context.generation + 1;
      if (generation !== context.generation + 1) {
        return {
          refusal: {
            code: 'generation_mismatch',
            detail: `the next generation is ${context.generation + 1}, not ${generation}`,
            path: 'generation',
          },
        };
      }
      const resolved = resolveStage(at.spec, input);
      if ('refusal' in resolved) return resolved;
      const { stage, purpose } = resolved;
      const assignment = at.prepareObject({
        kind: 'assignment',
        body: {
          taskId,
          attempt: context.attempt,
          generation,
          harness: input.harness,
          purpose,
          ...(stage !== undefined ? { stage } : {}),
          instructions: input.instructions,
        },
      });
      const event: TaskEvent = {
        type: input.type,
        revision,
        origin,
        generation,
        harness: input.harness,
        purpose,
        assignmentDigest: assignment.digest,
        ...(stage !== undefined ? { stage } : {}),
        ...(at.facts?.harnesses ? { harnesses: at.facts.harnesses } : {}),
      };
      return { event, prepared: [assignment] };
    }
    case 'completion.propose': {
      const proposal = at.prepareObject({
        kind: 'proposal',
        body: {
          taskId,
          generation: input.generation,
          evidence: input.evidence,
          summary: input.summary,
          proposer: input.proposer,
        },
      });
      const event: TaskEvent = {
        type: input.type,
        revision,
        origin,
        generation: input.generation,
        contextDigest: input.contextDigest ?? context.contextDigest ?? 'none',
        proposalDigest: proposal.digest,
        evidence: input.evidence,
        ...staleField(at.facts),
      };
      return { event, prepared: [proposal] };
    }
    case 'goal.revise': {
      const goalRevision = input.goalRevision ?? context.goal.revision + 1;
      if (goalRevision !== context.goal.revision + 1) {
        return {
          refusal: {
            code: 'goal_revision_mismatch',
            detail: `the next Goal revision is ${context.goal.revision + 1}, not ${goalRevision}`,
            path: 'goalRevision',
          },
        };
      }
      const goal = at.prepareObject({
        kind: 'goal',
        body: { taskId, revision: goalRevision, goal: input.goal, reason: input.reason },
      });
      return { event: { type: input.type, revision, origin, goalRevision, goalDigest: goal.digest }, prepared: [goal] };
    }
    case 'decision.submit': {
      const { contextDigest, candidateId, rationale, decider } = input;
      const decision = at.prepareObject({
        kind: 'decision',
        body: { taskId, contextDigest, candidateId, rationale, decider },
      });
      const facts = at.facts ?? { stale: [], known: false, generation: 0, authority: null };
      const event: TaskEvent = {
        type: input.type,
        revision,
        origin,
        contextDigest,
        candidateId,
        decisionDigest: decision.digest,
        generation: facts.generation ?? 0,
        known: facts.known ?? false,
        authority: facts.authority ?? null,
        action: facts.action ?? null,
        ...(facts.ask ? { ask: true } : {}),
        ...staleField(facts),
      };
      return { event, prepared: [decision] };
    }
    case 'request.answer': {
      const { requestId, answer, answeredBy, note } = input;
      const facts = at.facts ?? { stale: [], now: 0, allowed: false };
      const event: TaskEvent = {
        type: input.type,
        revision,
        origin,
        requestId,
        answer,
        answeredBy,
        note,
        now: facts.now ?? 0,
        allowed: facts.allowed ?? false,
        ...staleField(facts),
        ...(facts.revokedBy ? { revokedBy: facts.revokedBy } : {}),
      };
      return { event, prepared: [] };
    }
    default: {
      // Every other event is sent as the statechart takes it (with what moved under its Context).
      const { eventId: _eventId, ...fields } = input;
      return { event: { ...fields, revision, origin, ...staleField(at.facts) } as TaskEvent, prepared: [] };
    }
  }
}

/** The event's `stale` field: present only when something moved (an event without it re-validated clean, or had no read set). */
function staleField(facts: AdmissionFacts | undefined): { stale?: AdmissionFacts['stale'] } {
  return facts && facts.stale.length > 0 ? { stale: facts.stale } : {};
}

/**
 * Identity claims recorded with the event: the caller's (attached), those its definition names
 * (a dispatch's request id), and its idempotency key with the fingerprint of what it stood for.
 */
export function claimsFor(
  taskId: string,
  event: TaskEvent,
  input: EventInput,
  attached: IndexClaim[] = [],
): IndexClaim[] {
  const claims: IndexClaim[] = [...attached, ...claimsOf(event)];
  if (input.eventId !== undefined)
    claims.push({ kind: 'event', key: `${taskId}:${input.eventId}`, digest: fingerprint(input) });
  return claims;
}

/**
 * The journal record of the event as the statechart took it (`disposition`): its data apart from
 * type and origin, the objects it references, the clock's readings, and the caller's `eventId`
 * (a fresh id when none was sent).
 */
export function eventRecord(
  event: TaskEvent,
  input: EventInput,
  disposition: EventDisposition,
  clock: Clock,
): AppendInput['event'] {
  return {
    id: input.eventId ?? randomUUID(),
    type: event.type,
    origin: event.origin,
    at: clock.wall(),
    mono: clock.mono(),
    data: dataOf(event),
    refs: refsOf(event),
    disposition,
  };
}
