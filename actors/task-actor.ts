import { randomUUID } from 'node:crypto';
import { createActor, transition, type Actor, type InspectionEvent, type SnapshotFrom } from 'xstate';
import {
  EXTERNAL_EVENT_TYPES,
  TASK_MACHINE_VERSION,
  classifyTransition,
  stateName,
  taskFrontier,
  taskMachine,
  type EventOrigin,
  type FrontierWork,
  type TaskContext,
  type TaskEvent,
} from '../machines/index.js';
import { StoreError, digestOf, type EventStore, type IndexClaim, type NewObject } from '../store/index.js';
import type { Clock } from './clock.js';
import { issuePath } from './errors.js';
import { EventInput } from './event-input.js';
import { dataOf, refsOf } from './task-events-codec.js';

export type TaskSnapshot = SnapshotFrom<typeof taskMachine>;

/** What an idempotency key stands for: the caller's event as parsed, without the key itself. */
function fingerprint(input: EventInput): string {
  const { eventId: _eventId, ...rest } = input;
  return digestOf(rest);
}

/** What `send` answers: admitted, retained with a rejection (written), or refused (nothing written). */
export interface SendResult {
  admitted: boolean;
  /** True when the event was appended; false when it was refused and nothing was written. */
  written: boolean;
  code?: string;
  detail?: string;
  /** Field path of the offending input, for `invalid_event`. */
  path?: string;
  /** The revision of the event taken (for a duplicate, of its first delivery); the current one when refused. */
  revision: number;
  state: string;
  duplicate?: boolean;
}

/** Objects, blobs and claims the Host attaches to one of its own events (written in the same commit). */
export interface Attachments {
  objects?: NewObject[];
  blobs?: Uint8Array[];
  claims?: IndexClaim[];
}

export interface Committed {
  taskId: string;
  revision: number;
  type: string;
  origin: EventOrigin;
  state: string;
  frontier: FrontierWork;
  admitted: boolean;
  code?: string;
}

/**
 * One Task's kernel (DESIGN §5). Transitions are admitted one at a time through an in-process
 * mailbox (the state-root lock keeps every other process out): validate the event, compute the
 * next snapshot with the pure machine, append it with revision CAS, and only then advance the
 * live XState actor (the one the inspector sees) and tell subscribers. Effects are not run here:
 * the supervisor derives them from the new state's frontier after the commit.
 *
 * If the process dies after the append and before subscribers hear of it, nothing is lost: the
 * next boot rebuilds this Task from its events and resumes its frontier.
 */
export class TaskActor {
  private snapshot: TaskSnapshot;
  private mailbox: Promise<unknown> = Promise.resolve();
  private readonly live: Actor<typeof taskMachine>;

  constructor(
    readonly taskId: string,
    snapshot: TaskSnapshot,
    private revisionValue: number,
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly onCommit: (committed: Committed) => void,
    inspect?: (event: InspectionEvent) => void,
  ) {
    this.snapshot = snapshot;
    this.live = createActor(taskMachine, {
      snapshot: taskMachine.getPersistedSnapshot(snapshot) as never,
      id: `task:${taskId}`,
      ...(inspect ? { inspect } : {}),
    });
    this.live.start();
  }

  get revision(): number {
    return this.revisionValue;
  }

  get context(): TaskContext {
    return this.snapshot.context;
  }

  get state(): string {
    return stateName(this.snapshot.value);
  }

  get frontier(): FrontierWork {
    return this.snapshot.status === 'done' ? 'none' : taskFrontier(this.snapshot.value);
  }

  get done(): boolean {
    return this.snapshot.status === 'done';
  }

  /** The live XState actor, for inspection and `subscribe`. Never send to it directly. */
  get actor(): Actor<typeof taskMachine> {
    return this.live;
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
    this.live.stop();
  }

  private refuse(code: string, detail: string, path?: string): SendResult {
    const result: SendResult = { admitted: false, written: false, code, detail, revision: this.revisionValue, state: this.state };
    if (path !== undefined) result.path = path;
    return result;
  }

  /** Answers a retried event with how its first delivery was taken, writing nothing. */
  private duplicate(revision: number): SendResult {
    const stored = this.store.event(this.taskId, revision)!.disposition;
    const result: SendResult = { admitted: stored.admitted, written: false, duplicate: true, revision, state: this.state };
    if (!stored.admitted) result.code = stored.code;
    return result;
  }

  private async admit(raw: unknown, origin: EventOrigin, attachments: Attachments): Promise<SendResult> {
    const parsed = EventInput.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      return this.refuse('invalid_event', issue.message, issuePath(issue.path));
    }
    const input = parsed.data;
    if (origin === 'external' && !EXTERNAL_EVENT_TYPES.includes(input.type)) {
      return this.refuse('not_allowed', `${input.type} is established by the Host only; it cannot be sent from outside`);
    }
    if (input.eventId !== undefined) {
      const seen = this.store.claimedAt('event', `${this.taskId}:${input.eventId}`, this.taskId);
      if (seen !== undefined) {
        if (seen.digest !== undefined && seen.digest !== fingerprint(input)) {
          return this.refuse('idempotency_conflict', `eventId ${input.eventId} was already used for a different event (revision ${seen.revision})`, 'eventId');
        }
        return this.duplicate(seen.revision);
      }
    }
    if (this.done) return this.refuse('invalid_transition', `task ${this.taskId} is ${this.state}; it takes no more events`);

    const revision = this.revisionValue + 1;
    const context = this.snapshot.context;
    const objects: NewObject[] = [...(attachments.objects ?? [])];
    let event: TaskEvent;
    switch (input.type) {
      case 'assignment.commit': {
        const generation = input.generation ?? context.generation + 1;
        if (generation !== context.generation + 1) {
          return this.refuse('generation_mismatch', `the next generation is ${context.generation + 1}, not ${generation}`, 'generation');
        }
        const assignment = {
          taskId: this.taskId,
          attempt: context.attempt,
          generation,
          harness: input.harness,
          purpose: input.purpose,
          instructions: input.instructions,
        };
        objects.push({ kind: 'assignment', body: assignment });
        const assignmentDigest = this.store.prepareObject({ kind: 'assignment', body: assignment }).digest;
        event = { type: input.type, revision, origin, generation, harness: input.harness, purpose: input.purpose, assignmentDigest };
        break;
      }
      case 'completion.propose': {
        const proposal = {
          taskId: this.taskId,
          generation: input.generation,
          evidence: input.evidence,
          summary: input.summary,
          proposer: input.proposer,
        };
        objects.push({ kind: 'proposal', body: proposal });
        event = {
          type: input.type,
          revision,
          origin,
          generation: input.generation,
          contextDigest: input.contextDigest ?? context.contextDigest ?? 'none',
          proposalDigest: this.store.prepareObject({ kind: 'proposal', body: proposal }).digest,
          evidence: input.evidence,
        };
        break;
      }
      default: {
        const { eventId: _eventId, ...rest } = input;
        event = { ...rest, revision, origin } as TaskEvent;
      }
    }

    if (!this.snapshot.can(event)) {
      return this.refuse('invalid_transition', `task ${this.taskId} in state ${this.state} does not take ${event.type} here`);
    }
    const [next] = transition(taskMachine, this.snapshot, event);
    const disposition = classifyTransition(context, next.context);
    const claims = [...(attachments.claims ?? [])];
    if (event.type === 'dispatch.intend') claims.push({ kind: 'request', key: event.clientRequestId });
    if (input.eventId !== undefined) claims.push({ kind: 'event', key: `${this.taskId}:${input.eventId}`, digest: fingerprint(input) });

    let appended;
    try {
      appended = await this.store.append({
        taskId: this.taskId,
        expectedRevision: this.revisionValue,
        event: {
          id: input.eventId ?? randomUUID(),
          type: event.type,
          origin,
          at: this.clock.wall(),
          mono: this.clock.mono(),
          data: dataOf(event),
          refs: refsOf(event),
          disposition,
        },
        objects,
        ...(attachments.blobs ? { blobs: attachments.blobs } : {}),
        claims,
        projection: {
          revision,
          machineVersion: TASK_MACHINE_VERSION,
          state: stateName(next.value),
          snapshot: taskMachine.getPersistedSnapshot(next) as Record<string, unknown>,
        },
      });
    } catch (error) {
      if (error instanceof StoreError) return this.refuse(error.code, error.message);
      throw error;
    }
    if (appended.duplicate) return this.duplicate(appended.revision);
    this.snapshot = next;
    this.revisionValue = appended.revision;
    this.live.send(event);
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
    const result: SendResult = { admitted: disposition.admitted, written: true, revision: appended.revision, state: this.state };
    if (!disposition.admitted) {
      result.code = disposition.code;
      const rejection = next.context.rejections[next.context.rejections.length - 1];
      if (rejection?.detail) result.detail = rejection.detail;
    }
    return result;
  }
}
