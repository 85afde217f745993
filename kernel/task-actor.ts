import { createActor, type Actor, type InspectionEvent } from 'xstate';
import {
  TASK_MACHINE_VERSION,
  classifyTransition,
  stateName,
  snapshotView,
  taskMachine,
  type EventOrigin,
  type FrontierWork,
  type TaskMachineContext,
  type TaskSnapshot,
} from '../machines/index.js';
import { StoreError, type EventStore } from '../store/index.js';
import type { TaskSpec } from '../objects/index.js';
import type { Clock } from './clock.js';
import { hostCodeOf } from './errors.js';
import { fingerprint, parseEventInput, type EventInput, type Refusal } from './event-input.js';
import { claimsFor, eventRecord, kernelEvent, type KernelEvent } from './kernel-event.js';
import { admissionFacts } from './admission-facts.js';
import type { ObservationReader, SourceLocation } from '../readsets/index.js';
import {
  sendAdmitted,
  sendDuplicate,
  sendRefused,
  sendRetained,
  type Attachments,
  type Committed,
  type SendResult,
} from './send-result.js';

export type { TaskSnapshot };

// `send`'s attachment and answer types, re-exported for this module's importers.
export type { Attachments, Committed, SendResult } from './send-result.js';

export interface TaskActorOptions {
  /** XState inspection observer for the Task's observed actor. */
  inspect?: ((event: InspectionEvent) => void) | undefined;
  /** The Task's spec: an Assignment must name one of its stages (a bare kernel without one checks none). */
  spec?: TaskSpec | undefined;
  /**
   * Reads a spec source's current digest when admission re-validates a Context's read set (the
   * Supervisor gives its own, `kernelSourceReader`); without one only the Goal is re-validated.
   */
  readSource?: ((location: SourceLocation, context: TaskMachineContext) => Promise<string | null>) | undefined;
  /**
   * Observes an `effect` candidate's endpoint and target again when a decision choosing it is
   * admitted (the frontier runner's `readObservation`); without one, observation items are left
   * to the re-check before the Effect is performed.
   */
  readObservation?: ObservationReader | undefined;
  /** The harnesses the Host runs: an `assignment.commit` naming another is retained, refused `harness_unknown`. */
  harnesses?: readonly string[] | undefined;
  /** Told of every store failure of an append (the event is refused with its code): the Supervisor stops serving a Task whose lease was lost. */
  onStoreRefusal?: ((code: StoreError['code']) => void) | undefined;
}

/** Where a Task's kernel starts: its committed snapshot and revision, its store and clock, and who hears each commit. */
export interface TaskActorInit {
  taskId: string;
  snapshot: TaskSnapshot;
  revision: number;
  store: EventStore;
  clock: Clock;
  onCommit: (committed: Committed) => void;
}

/**
 * One Task's kernel (docs/design.md, "The kernel: one transition"). Transitions are admitted one at a time through an in-process
 * mailbox (the state-root lock keeps every other process out): validate the event, take it on
 * the Task's long-lived machine actor (one XState actor per Task, no subscribers, so each event
 * costs one macrostep rather than a pure `transition()` that builds a throwaway actor scope every
 * call), append the resulting snapshot with revision CAS, and only then publish it as the
 * committed snapshot, advance the observed actor (the one the inspector and `actor` subscribers
 * see) and tell subscribers. An event the state cannot take is refused by `snapshot.can` before
 * the machine actor sees it; if the append fails after the machine actor moved, the machine actor is
 * dropped and rebuilt from the committed snapshot on next use, so nothing uncommitted survives.
 * Effects are not run here: the supervisor derives them from the new state's frontier after the commit.
 *
 * Actors are created lazily: a Task restored at boot costs a snapshot until it is first sent to
 * or observed.
 *
 * If the process dies after the append and before subscribers hear of it, nothing is lost: the
 * next boot rebuilds this Task from its events and resumes its frontier.
 */
export class TaskActor {
  private snapshot: TaskSnapshot;
  private mailbox: Promise<unknown> = Promise.resolve();
  /** At `snapshot` between admissions; ahead of it only while an append is in flight. */
  private kernel: Actor<typeof taskMachine> | undefined;
  /** Follows committed snapshots only; created for an inspector or on first `actor` access. */
  private observed: Actor<typeof taskMachine> | undefined;
  private stopped = false;
  readonly taskId: string;
  private revisionValue: number;
  private readonly store: EventStore;
  private readonly clock: Clock;
  private readonly onCommit: (committed: Committed) => void;

  constructor(
    init: TaskActorInit,
    private readonly options: TaskActorOptions = {},
  ) {
    this.taskId = init.taskId;
    this.snapshot = init.snapshot;
    this.revisionValue = init.revision;
    this.store = init.store;
    this.clock = init.clock;
    this.onCommit = init.onCommit;
    // An inspector sees every Task from the start, as before lazy creation.
    if (options.inspect) void this.actor;
  }

  get revision(): number {
    return this.revisionValue;
  }

  get context(): TaskMachineContext {
    return this.snapshot.context;
  }

  get state(): string {
    return stateName(this.snapshot.value);
  }

  get frontier(): FrontierWork {
    return snapshotView(this.snapshot).frontier;
  }

  get done(): boolean {
    return this.snapshot.status === 'done';
  }

  /** The committed snapshot in persisted form (what projections and checkpoints store). */
  persistedSnapshot(): Record<string, unknown> {
    return taskMachine.getPersistedSnapshot(this.snapshot) as Record<string, unknown>;
  }

  /**
   * The live XState actor at the committed snapshot, for inspection and `subscribe` (created on
   * first access; it hears each event only after its commit). Never send to it directly.
   */
  get actor(): Actor<typeof taskMachine> {
    if (!this.observed) {
      this.observed = createActor(taskMachine, {
        snapshot: taskMachine.getPersistedSnapshot(this.snapshot),
        id: `task:${this.taskId}`,
        ...(this.options.inspect ? { inspect: this.options.inspect } : {}),
      });
      this.observed.start();
      if (this.stopped) this.observed.stop();
    }
    return this.observed;
  }

  /** Admits one event. Calls on one Task are serialized; calls on different Tasks run concurrently. */
  send(raw: unknown, origin: EventOrigin, attachments: Attachments = {}): Promise<SendResult> {
    const next = this.mailbox.then(() => this.admit(raw, origin, attachments));
    this.mailbox = next.catch(() => undefined);
    return next;
  }

  /** Resolves once every transition sent so far has committed or been refused. */
  settled(): Promise<void> {
    return this.mailbox.then(() => undefined);
  }

  stop(): void {
    this.stopped = true;
    this.kernel?.stop();
    this.kernel = undefined;
    this.observed?.stop();
  }

  /** The machine actor at the committed snapshot (restored from it when absent). */
  private kernelActor(): Actor<typeof taskMachine> {
    if (!this.kernel) {
      this.kernel = createActor(taskMachine, { snapshot: taskMachine.getPersistedSnapshot(this.snapshot) });
      // An error observer keeps XState from rethrowing a failed step out of band; admit rethrows it.
      this.kernel.subscribe({ error: () => {} });
      this.kernel.start();
    }
    return this.kernel;
  }

  private refuse(refusal: Refusal): SendResult {
    return sendRefused(refusal, { revision: this.revisionValue, state: this.state });
  }

  /** Answers a retried event with how its first delivery was taken, writing nothing. */
  private duplicate(revision: number): SendResult {
    const stored = this.store.event(this.taskId, revision)!.disposition;
    return sendDuplicate(stored, { revision, state: this.state });
  }

  private async admit(raw: unknown, origin: EventOrigin, attachments: Attachments): Promise<SendResult> {
    const parsed = parseEventInput(raw, origin);
    if ('refusal' in parsed) return this.refuse(parsed.refusal);
    const { input } = parsed;
    if (input.eventId !== undefined) {
      const seen = this.store.claimedAt('event', `${this.taskId}:${input.eventId}`, this.taskId);
      if (seen !== undefined) {
        if (seen.digest !== undefined && seen.digest !== fingerprint(input)) {
          return this.refuse({
            code: 'idempotency_conflict',
            detail: `eventId ${input.eventId} was already used for a different event (revision ${seen.revision})`,
            path: 'eventId',
          });
        }
        return this.duplicate(seen.revision);
      }
    }
    if (this.done)
      return this.refuse({
        code: 'invalid_transition',
        detail: `task ${this.taskId} is ${this.state}; it takes no more events`,
      });

    const context = this.snapshot.context;
    const { readSource } = this.options;
    const read = readSource ? (location: SourceLocation) => readSource(location, context) : undefined;
    const admission = await admissionFacts(input, {
      store: this.store,
      taskId: this.taskId,
      context,
      read,
      now: Date.parse(this.clock.wall()),
      harnesses: this.options.harnesses,
      observe: this.options.readObservation,
      spec: this.options.spec,
    });
    if ('refusal' in admission) return this.refuse(admission.refusal);
    const taken = kernelEvent(input, {
      taskId: this.taskId,
      context,
      revision: this.revisionValue + 1,
      origin,
      prepareObject: (object) => this.store.prepareObject(object),
      facts: admission.facts,
    });
    const { event } = taken;

    const kernel = this.kernelActor();
    if (!kernel.getSnapshot().can(event)) {
      return this.refuse({
        code: 'invalid_transition',
        detail: `task ${this.taskId} in state ${this.state} does not take ${event.type} here`,
      });
    }
    kernel.send(event);
    // From here until the commit the machine actor is ahead of the committed snapshot: any way out
    // other than a commit drops it (it is rebuilt from the committed snapshot on next use).
    let committedNext = false;
    try {
      const result = await this.commit(kernel, taken, { input, attachments, context });
      committedNext = result.written;
      return result;
    } finally {
      if (!committedNext) {
        kernel.stop();
        if (this.kernel === kernel) this.kernel = undefined;
      }
    }
  }

  /** Appends the machine actor's new snapshot; on success publishes it as committed. */
  private async commit(
    kernel: Actor<typeof taskMachine>,
    { event, prepared }: KernelEvent,
    { input, attachments, context }: { input: EventInput; attachments: Attachments; context: TaskMachineContext },
  ): Promise<SendResult> {
    const next = kernel.getSnapshot();
    if (next.status === 'error') throw next.error;
    const disposition = classifyTransition(context, next.context);
    const { revision, origin } = event;

    let appended;
    try {
      appended = await this.store.append({
        taskId: this.taskId,
        expectedRevision: this.revisionValue,
        event: eventRecord(event, input, disposition, this.clock),
        objects: attachments.objects ?? [],
        prepared,
        ...(attachments.blobs ? { blobs: attachments.blobs } : {}),
        claims: claimsFor(this.taskId, event, input, attachments.claims),
        projection: {
          revision,
          machineVersion: TASK_MACHINE_VERSION,
          state: stateName(next.value),
          snapshot: taskMachine.getPersistedSnapshot(next) as Record<string, unknown>,
        },
      });
    } catch (error) {
      if (error instanceof StoreError) {
        this.options.onStoreRefusal?.(error.code);
        return this.refuse({ code: hostCodeOf(error.code), detail: error.message });
      }
      throw error;
    }
    if (appended.duplicate) return this.duplicate(appended.revision);
    this.snapshot = next;
    this.revisionValue = appended.revision;
    this.observed?.send(event);
    const committed: Committed = {
      taskId: this.taskId,
      revision: appended.revision,
      type: event.type,
      origin,
      state: this.state,
      frontier: this.frontier,
      admitted: disposition.admitted,
    };
    if (!disposition.admitted) committed.code = disposition.code;
    this.onCommit(committed);
    const at = { revision: appended.revision, state: this.state };
    // Retained: classifyTransition found one more rejection, this one, in lastRejection.
    return disposition.admitted ? sendAdmitted(at) : sendRetained(at, next.context.lastRejection!);
  }
}
