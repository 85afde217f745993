import { randomUUID } from 'node:crypto';
import {
  TASK_EVENTS,
  claimsOf,
  refsOf,
  type EventOrigin,
  type TaskMachineContext,
  type TaskEvent,
  type TaskEventDefinition,
} from '../machines/index.js';
import type { AppendInput, EventDisposition, IndexClaim, NewObject, PreparedObject } from '../store/index.js';
import type { Clock } from './clock.js';
import { fingerprint, type EventInput } from './event-input.js';
import { dataOf } from '../objects/index.js';
import type { AdmissionFacts } from './admission-facts.js';

/** Where a sent event is taken: its Task, the committed context, and the revision the event will occupy. */
export interface KernelFacts {
  taskId: string;
  context: TaskMachineContext;
  revision: number;
  origin: EventOrigin;
  /** Digests an object body the way the store will write it (`EventStore.prepareObject`). */
  prepareObject: (object: NewObject) => PreparedObject;
  /** What admission established about the event (`admissionFacts`). */
  facts: AdmissionFacts;
}

/** A sent event as the kernel takes it: the statechart's event and the objects written with it. */
export interface KernelEvent {
  event: TaskEvent;
  /** Objects the kernel writes for the event (their digests are in it), in the same commit. */
  prepared: PreparedObject[];
}

const DEFINITIONS: ReadonlyMap<string, TaskEventDefinition> = new Map(TASK_EVENTS.map((d) => [d.type, d]));

/**
 * Completes what a caller sent into the statechart's event, as its catalog entry says
 * (machines/task-events.ts): adds the revision and origin and what admission established
 * (`facts`), writes the object the entry names (an Assignment, a proposal, a Goal, a decision) and
 * names its digest, and keeps of what was sent the event's own fields (the rest is kept only in
 * that object).
 */
export function kernelEvent(input: EventInput, at: KernelFacts): KernelEvent {
  const { taskId, context, revision, origin } = at;
  const definition = DEFINITIONS.get(input.type)!;
  const { eventId: _eventId, ...sent } = input;
  const admitted: Record<string, unknown> = { ...sent, ...at.facts };
  const prepared: PreparedObject[] = [];
  const { object } = definition.admission;
  if (object) {
    const written = at.prepareObject({
      kind: object.kind,
      body: object.body(admitted, { taskId, attempt: context.attempt }),
    });
    admitted[object.field] = written.digest;
    prepared.push(written);
  }
  const event: Record<string, unknown> = { type: input.type, revision, origin };
  for (const field of Object.keys(definition.schema.shape))
    if (!(field in event) && admitted[field] !== undefined) event[field] = admitted[field];
  return { event: event as TaskEvent, prepared };
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
