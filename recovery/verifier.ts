import { createActor, type Actor, type Snapshot } from 'xstate';
import type { ZodError } from 'zod';
import { zodIssue } from '../base/index.js';
import {
  TASK_EVENTS,
  TASK_EVENT_CLAIMS,
  TASK_EVENT_REFS,
  TASK_MACHINE_VERSION,
  stateName,
  taskMachine,
  type TaskEventType,
  type TaskMachine,
  type TaskSnapshot,
} from '../machines/index.js';
import { Head, Projection, type EventRecord, type ObjectKinds, type RawEvent } from '../store/index.js';
import { jsonEqual } from './digest.js';
import type { Finding } from './errors.js';
import { headFinding } from './head-finding.js';
import { ObjectChecks } from './object-checks.js';
import type { VerifySource } from './source.js';
import { chainEvents, replayEvents } from './stream-checks.js';

/** The event type that references the Task spec (its object is checked at once: the spec is returned). */
const SPEC_EVENT = TASK_EVENTS.find((d) => Object.values(d.refs).includes('task-spec'))!.type;
const NO_CLAIMS: (typeof TASK_EVENT_CLAIMS)[TaskEventType] = [];
/**
 * Per event type, its fields naming `effect-receipt` objects: the evidence blobs such a receipt
 * names are references of the event as well (a receipt's files are not in the event's `refs`).
 */
const RECEIPT_FIELDS = new Map(
  Object.entries(TASK_EVENT_REFS)
    .map(([type, refs]) => [type, refs.filter((r) => r.kind === 'effect-receipt').map((r) => r.field)] as const)
    .filter(([, fields]) => fields.length > 0),
);

/** The `effect-receipt` digests an event names in `fields` (a digest or a list of them). */
function receiptRefs(data: Record<string, unknown>, fields: readonly string[]): string[] {
  const refs: string[] = [];
  for (const field of fields) {
    const value = data[field];
    if (typeof value === 'string') refs.push(value);
    else if (Array.isArray(value)) for (const v of value) if (typeof v === 'string') refs.push(v);
  }
  return refs;
}

/**
 * The checks of a verified rebuild, independent of where the bytes come from. LMDB (in-thread
 * or in worker threads), the checkpointed path's tail replay and the SQLite peer all run this
 * same code, so they report the same findings for the same damage.
 */

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** Where a stream's replay starts: from nothing, or from a verified checkpoint. */
export interface ReplayStart {
  revision: number;
  digest: string;
  /** Persisted XState snapshot at `revision`. */
  snapshot: Record<string, unknown>;
}

/**
 * A Task's checkpoint as a chain-verified boot offers it to `verifyStream`: one of this machine
 * version and machine code (trusted once the chain matches it), or `'other-code'`, one written by
 * another machine version or machine code (never trusted: the Task is replayed in full).
 */
export type OfferedCheckpoint =
  { revision: number; headDigest: string; snapshot: Record<string, unknown> } | 'other-code';

/**
 * How a chain-verified boot started each Task's replay: `trusted` from its checkpoint (of those,
 * `tailReplayed` had events after it), or `fullReplayed` from revision 1 — among them
 * `codeChanged` whose checkpoint came from other machine code or another machine version, and
 * `headMismatch` whose checkpoint's revision and head digest are not in the chain.
 */
export interface StartCounts {
  trusted: number;
  tailReplayed: number;
  fullReplayed: number;
  codeChanged: number;
  headMismatch: number;
}

export interface VerifiedTask {
  taskId: string;
  revision: number;
  headDigest: string;
  /** Persisted snapshot after the last event (what the projection must hold). */
  persisted: Record<string, unknown>;
  /** The replayed machine snapshot, when the caller asked to keep it (in-thread rebuilds). */
  snapshot?: TaskSnapshot;
  /** The Task's spec body, when its `task.created` event was replayed and its object verified. */
  spec?: unknown;
}

export interface VerifierOptions {
  /**
   * Also decode every object and check its body against its kind's schema (`ordivon doctor`,
   * backups). Without it an object's integrity is checked by its digest alone — the bytes are the
   * ones the Host validated when it wrote them — and only bodies recovery uses (Task specs) are
   * decoded and schema-checked; Effect receipts are decoded for the evidence blobs they name
   * (`ObjectChecks.evidenceOf`); other bodies are checked again whenever they are read
   * (`EventStore.getObject`).
   */
  bodies?: boolean;
  /** References whose objects are read together, in digest order (default 262,144; at most 1,048,576). */
  objectBatch?: number;
}

/** Shared state of one verification run: findings, counts, verified objects, request owners. */
export class RecoveryVerifier {
  readonly requestOwners = new Map<string, Set<string>>();
  /** Events verified (decoded and chained, their objects checked). */
  events = 0;
  /** Events of those replayed through the statechart (all of them unless a checkpoint was trusted). */
  replayed = 0;
  /** How the streams' replays started (see `StartCounts`). */
  readonly starts: StartCounts = { trusted: 0, tailReplayed: 0, fullReplayed: 0, codeChanged: 0, headMismatch: 0 };
  private readonly found: Finding[] = [];
  private readonly objects: ObjectChecks;

  constructor(
    private readonly source: VerifySource,
    kinds: ObjectKinds,
    options: VerifierOptions = {},
  ) {
    this.objects = new ObjectChecks(source, kinds, this.found, options);
  }

  /** Findings in Task and event order (the references still waiting are checked first). */
  get findings(): Finding[] {
    this.objects.checkWaiting();
    return this.found;
  }

  /** Distinct objects found (the references still waiting are checked first). */
  get objectCount(): number {
    this.objects.checkWaiting();
    return this.objects.size;
  }

  /**
   * Reads and parses a head; a malformed head is a `stream_corrupt` finding and counts as absent.
   * `read` supplies the stored value when the caller has it already (a cursor over the heads).
   */
  head(taskId: string, read: () => unknown = () => this.source.rawHead(taskId)): Head | undefined {
    try {
      const raw = read();
      if (raw === undefined) return undefined;
      // The common case by hand (what `Head.safeParse` returns for it); anything else goes to zod.
      if (typeof raw === 'object' && raw !== null && Object.getPrototypeOf(raw) === Object.prototype) {
        const { revision, digest } = raw as Record<string, unknown>;
        if (
          typeof revision === 'number' &&
          Number.isSafeInteger(revision) &&
          revision > 0 &&
          typeof digest === 'string' &&
          DIGEST.test(digest)
        )
          return { revision, digest };
      }
      const parsed = Head.safeParse(raw);
      if (parsed.success) return parsed.data;
      this.found.push({
        code: 'stream_corrupt',
        taskId,
        object: 'head',
        message: `stored record ${JSON.stringify({ taskId, object: 'head' })} is malformed at ${issueAt(parsed.error)}`,
      });
    } catch (error) {
      this.found.push({ code: 'stream_corrupt', taskId, object: 'head', message: (error as Error).message });
    }
    return undefined;
  }

  /**
   * Verifies one stream: contiguous revisions, digest chain, referenced objects, replay through
   * the statechart with every recorded disposition, head, and projection. Pushes findings and
   * returns the rebuilt Task, or undefined when any check failed.
   *
   * The checks run in three passes over the stream (decode and chain; replay; objects) instead of
   * all checks per event: the same work in about 0.7× the time (each pass keeps its code and data
   * hot). The result is exactly the per-event order's: a pass stops where that order would have
   * stopped, objects are checked for the events that order reached, and findings come out in
   * that order.
   */
  verifyStream(
    taskId: string,
    head: Head | undefined,
    events: Iterable<RawEvent>,
    start?: ReplayStart,
    keepSnapshot = false,
    offered?: OfferedCheckpoint,
  ): VerifiedTask | undefined {
    const base = start?.revision ?? 0;
    // Pass 1: decoded, contiguous, well-formed and chained; stop at the first failure.
    const { records, prevDigest, stop, counted } = chainEvents(taskId, events, base, start?.digest ?? null);
    const trusted = this.trustedStart(records, prevDigest, offered);
    const from = trusted?.from ?? 0;

    // Pass 2: replay the chained events, each taken as recorded; stop at the first divergence.
    const actor =
      trusted?.actor ??
      (start
        ? createActor(taskMachine, { snapshot: start.snapshot as Snapshot<unknown> })
        : createActor(taskMachine)
      ).start();
    const tail = replayEvents(actor, taskId, from === 0 ? records : records.slice(from), base + from);
    const { divergence } = tail;
    // Events taken as recorded: the trusted prefix, then the replayed tail.
    const replayed = from + tail.replayed;
    this.replayed += divergence ? tail.replayed + 1 : tail.replayed;

    // Pass 3: objects of every event the per-event order reached (up to and including a divergent
    // one, whose refs it checked before replaying it), then request ids of the replayed events.
    const spec = this.checkReached(taskId, records, base, divergence ? replayed + 1 : records.length, replayed);
    this.events += divergence ? replayed + 1 : counted;
    const ending = divergence ?? stop;
    if (ending) this.found.push(ending);

    const last = base + records.length;
    let failed = ending !== undefined;
    const headWrong = failed ? undefined : headFinding(taskId, last, head, prevDigest);
    if (headWrong) {
      this.found.push(headWrong);
      failed = true;
    }
    const result = failed ? undefined : this.rebuilt(taskId, actor, last, prevDigest!, keepSnapshot, spec);
    actor.stop();
    return result;
  }

  /**
   * A checkpoint offered by a chain-verified boot is trusted only when the chain just verified
   * has the checkpoint's digest at its revision; then only the events after it are replayed.
   * Counts how the replay starts; undefined when it starts from the stream's start.
   */
  private trustedStart(
    records: EventRecord[],
    prevDigest: string | null,
    offered: OfferedCheckpoint | undefined,
  ): { actor: Actor<TaskMachine>; from: number } | undefined {
    let trusted: { actor: Actor<TaskMachine>; from: number } | undefined;
    if (offered && offered !== 'other-code') {
      const at = offered.revision;
      const digest = at === records.length ? prevDigest : at < records.length ? records[at]!.prev : undefined;
      if (digest === offered.headDigest) {
        try {
          trusted = {
            actor: createActor(taskMachine, { snapshot: offered.snapshot as Snapshot<unknown> }).start(),
            from: at,
          };
        } catch {
          trusted = undefined;
        }
      }
      if (trusted) {
        this.starts.trusted++;
        if (trusted.from < records.length) this.starts.tailReplayed++;
      } else this.starts.headMismatch++;
    } else if (offered === 'other-code') this.starts.codeChanged++;
    if (!trusted) this.starts.fullReplayed++;
    return trusted;
  }

  /**
   * Pass 3 over the first `reached` records: the Task spec is checked now (it is returned); other
   * references wait for their batch, and their findings take the places they would have had. The
   * first `replayed` records claim their request ids.
   */
  private checkReached(
    taskId: string,
    records: EventRecord[],
    base: number,
    reached: number,
    replayed: number,
  ): unknown {
    const objects = this.objects;
    let spec: unknown;
    for (let i = 0; i < reached; i++) {
      const record = records[i]!;
      const waiting = objects.waiting;
      for (const ref of record.refs) {
        if (record.type === SPEC_EVENT) {
          const { verdict, finding } = objects.checkRef(taskId, base + i + 1, ref, true);
          if (finding) this.found.push(finding);
          if (verdict.ok && verdict.kind === 'task-spec') spec = verdict.body;
        } else {
          waiting.refs.push(ref);
          waiting.taskIds.push(taskId);
          waiting.revisions.push(base + i + 1);
          waiting.at.push(this.found.length);
        }
      }
      const receiptFields = RECEIPT_FIELDS.get(record.type);
      if (receiptFields)
        for (const receipt of receiptRefs(record.data, receiptFields))
          for (const blob of objects.evidenceOf(receipt)) {
            waiting.refs.push(blob);
            waiting.taskIds.push(taskId);
            waiting.revisions.push(base + i + 1);
            waiting.at.push(this.found.length);
          }
      if (waiting.refs.length >= objects.batch) objects.checkWaiting();
      if (i < replayed)
        for (const claim of TASK_EVENT_CLAIMS[record.type as TaskEventType] ?? NO_CLAIMS)
          if (claim.kind === 'request') this.claimRequest(String(record.data[claim.field]), taskId);
    }
    return spec;
  }

  /** The rebuilt Task when the stored projection matches the replay (or is of another machine version), else a `projection_drift` finding. */
  private rebuilt(
    taskId: string,
    actor: Actor<TaskMachine>,
    last: number,
    headDigest: string,
    keepSnapshot: boolean,
    spec: unknown,
  ): VerifiedTask | undefined {
    const snapshot = actor.getSnapshot();
    const persisted = taskMachine.getPersistedSnapshot(snapshot) as Record<string, unknown>;
    const projection = this.projection(taskId);
    const stale = projection !== undefined && projection.machineVersion !== TASK_MACHINE_VERSION;
    const state = stateName(snapshot.value);
    if (
      !stale &&
      (!projection ||
        projection.revision !== last ||
        projection.state !== state ||
        !jsonEqual(projection.snapshot, persisted))
    ) {
      this.found.push({
        code: 'projection_drift',
        taskId,
        revision: projection?.revision ?? last,
        object: 'projection',
        message: `task ${taskId}: stored projection ${projection ? `at revision ${projection.revision} (${projection.state})` : '(missing)'} differs from replay at revision ${last} (${state})`,
      });
      return undefined;
    }
    const result: VerifiedTask = { taskId, revision: last, headDigest, persisted };
    if (keepSnapshot) result.snapshot = snapshot;
    if (spec !== undefined) result.spec = spec;
    return result;
  }

  /** Reads and parses a projection; a malformed one is a `projection_drift` finding and counts as absent. */
  projection(taskId: string): Projection | undefined {
    try {
      const raw = this.source.rawProjection(taskId);
      if (raw === undefined) return undefined;
      const parsed = Projection.safeParse(raw);
      if (parsed.success) return parsed.data;
      this.found.push({
        code: 'projection_drift',
        taskId,
        object: 'projection',
        message: `stored record ${JSON.stringify({ taskId, object: 'projection' })} is malformed at ${issueAt(parsed.error)}`,
      });
    } catch (error) {
      this.found.push({ code: 'projection_drift', taskId, object: 'projection', message: (error as Error).message });
    }
    return undefined;
  }

  /** Records a request id claimed by a Task (from a replayed event whose definition claims one). */
  claimRequest(id: string, taskId: string): void {
    (this.requestOwners.get(id) ?? this.requestOwners.set(id, new Set()).get(id)!).add(taskId);
  }
}

/** `path: message` of the first issue of a stored record that does not parse. */
function issueAt(error: ZodError): string {
  const { path, message } = zodIssue('record_corrupt', error);
  return `${path}: ${message}`;
}
