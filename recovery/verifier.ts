import { createActor } from 'xstate';
import { TASK_MACHINE_VERSION, classifyTransition, stateName, taskMachine, type TaskEvent } from '../machines/index.js';
import {
  Head,
  Projection,
  objectMatches,
  objectValue,
  safeParseEventRecord,
  type EventRecord,
  type ObjectKinds,
  type RawObject,
} from '../store/index.js';
import type { Finding } from '../actors/errors.js';
import { eventDigest, jsonEqual, sha256Bytes } from './digest.js';
import type { TaskSnapshot } from '../actors/task-actor.js';

/**
 * The checks of a verified rebuild, independent of where the bytes come from. LMDB (in-thread
 * or in worker threads), the checkpointed path's tail replay and the SQLite peer all run this
 * same code, so they report the same findings for the same damage.
 */

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** One stored event as read: its key's revision and either the decoded value or why decoding failed. */
export type RawEvent =
  { revision: number; value: unknown; error?: undefined } | { revision: number; value?: undefined; error: string };

/** What a verifier reads besides the events of a stream. Reads may throw; the verifier turns that into findings. */
export interface VerifySource {
  /** The stored head record (unparsed), undefined when absent. */
  rawHead(taskId: string): unknown;
  /** The stored projection record (unparsed), undefined when absent. */
  rawProjection(taskId: string): unknown;
  /** The stored object (bytes, text or an older layout's decoded value), undefined when absent. */
  rawObject(digest: string): RawObject | undefined;
  /** Artifact bytes, undefined when absent. */
  blob(digest: string): Uint8Array | undefined;
  /**
   * Optional fast path of a digest-only check (`EventStore.storedDigest`): whether the stored
   * object or blob hashes to `digest`, without handing its bytes out; `'legacy'` sends the check
   * to `rawObject`. Sources without it are checked through `rawObject` and `blob`.
   */
  storedDigest?(digest: string): { in: 'object' | 'blob'; matches: boolean } | 'legacy' | undefined;
}

/** Where a stream's replay starts: from nothing, or from a verified checkpoint. */
export interface ReplayStart {
  revision: number;
  digest: string;
  /** Persisted XState snapshot at `revision`. */
  snapshot: Record<string, unknown>;
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

/** A verified object; the body is kept for Task specs only (the supervisor needs them, nothing else does). */
type ObjectVerdict =
  | { ok: true; kind?: string; body?: unknown }
  | { ok: false; code: 'object_missing' | 'object_corrupt'; message: string };
/** The verdict of an object checked by digest alone: one shared value (a rebuild remembers a verdict per object, ~1M at 1M events). */
const MATCHES: ObjectVerdict = Object.freeze({ ok: true });

export interface VerifierOptions {
  /**
   * Also decode every object and check its body against its kind's schema (`ordivon doctor`,
   * backups). Without it an object's integrity is checked by its digest alone — the bytes are the
   * ones the Host validated when it wrote them — and only bodies recovery uses (Task specs) are
   * decoded and schema-checked; other bodies are checked again whenever they are read
   * (`EventStore.getObject`).
   */
  bodies?: boolean;
  /** References whose objects are read together, in digest order (default 262,144; at most 1,048,576). */
  objectBatch?: number;
}

/**
 * References whose objects are checked per batch, looked up in key (digest) order. On the bench's
 * 1M-event root (744k references, each to its own object, random over a 1.46 GB map) a lookup in
 * event order cost ~8 µs inside a rebuild and ~6 µs in digest order, back to back.
 */
const OBJECT_BATCH = 1 << 18;
const MAX_OBJECT_BATCH = 1 << 20;

/** References waiting for their batch, as parallel arrays (no object per reference). */
interface Waiting {
  refs: string[];
  taskIds: string[];
  revisions: number[];
  /** `findings.length` when the event was reached: the reference's finding, if any, goes there. */
  at: number[];
}

const noneWaiting = (): Waiting => ({ refs: [], taskIds: [], revisions: [], at: [] });

/** Shared state of one verification run: findings, counts, verified objects, request owners. */
export class RecoveryVerifier {
  readonly requestOwners = new Map<string, Set<string>>();
  events = 0;
  private readonly found: Finding[] = [];
  private readonly objects = new Map<string, ObjectVerdict>();
  private waiting: Waiting = noneWaiting();
  private readonly bodies: boolean;
  private readonly objectBatch: number;

  constructor(
    private readonly source: VerifySource,
    private readonly kinds: ObjectKinds,
    options: VerifierOptions = {},
  ) {
    this.bodies = options.bodies ?? false;
    this.objectBatch = Math.max(1, Math.min(options.objectBatch ?? OBJECT_BATCH, MAX_OBJECT_BATCH));
  }

  /** Findings in Task and event order (the references still waiting are checked first). */
  get findings(): Finding[] {
    this.checkWaiting();
    return this.found;
  }

  /** Distinct objects found (the references still waiting are checked first). */
  get objectCount(): number {
    this.checkWaiting();
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
  ): VerifiedTask | undefined {
    const base = start?.revision ?? 0;
    // Pass 1: decoded, contiguous, well-formed and chained; stop at the first failure.
    const records: EventRecord[] = [];
    let prevDigest: string | null = start?.digest ?? null;
    let stop: Finding | undefined;
    let counted = 0;
    for (const raw of events) {
      const expected = base + records.length + 1;
      if (raw.error !== undefined) {
        stop = {
          code: 'stream_corrupt',
          taskId,
          revision: expected,
          object: `event ${expected}`,
          message: `task ${taskId} event ${expected} cannot be decoded: ${raw.error}`,
        };
        break;
      }
      counted++;
      const { revision, value } = raw;
      if (revision !== expected) {
        stop = {
          code: 'stream_gap',
          taskId,
          revision: expected,
          object: `event ${expected}`,
          message: `task ${taskId}: event ${expected} is missing (next stored is ${revision})`,
        };
        break;
      }
      const parsed = safeParseEventRecord(value);
      if (!parsed.success) {
        stop = {
          code: 'stream_corrupt',
          taskId,
          revision,
          object: `event ${revision}`,
          message: `task ${taskId} event ${revision} is malformed`,
        };
        break;
      }
      const record = parsed.data;
      if (record.prev !== prevDigest) {
        stop = {
          code: 'stream_corrupt',
          taskId,
          revision,
          object: `event ${revision}`,
          message: `task ${taskId} event ${revision} does not chain to event ${revision - 1} (prev ${record.prev ?? 'null'}, expected ${prevDigest ?? 'null'})`,
        };
        break;
      }
      records.push(record);
      prevDigest = eventDigest(record);
    }

    // Pass 2: replay the chained events, each taken as recorded; stop at the first divergence.
    const actor = (
      start ? createActor(taskMachine, { snapshot: start.snapshot as never }) : createActor(taskMachine)
    ).start();
    let divergence: Finding | undefined;
    let replayed = 0;
    for (; replayed < records.length; replayed++) {
      const record = records[replayed]!;
      const revision = base + replayed + 1;
      const before = actor.getSnapshot();
      actor.send(ownedMachineEvent(record, revision));
      const after = actor.getSnapshot();
      const taken = classifyTransition(before.context, after.context);
      if (after === before || !sameDisposition(taken, record.disposition)) {
        divergence = {
          code: 'replay_divergence',
          taskId,
          revision,
          object: `event ${revision}`,
          message: `task ${taskId} event ${revision} (${record.type}) was recorded ${JSON.stringify(record.disposition)} but the statechart ${after === before ? 'does not take it' : `gives ${JSON.stringify(taken)}`}`,
        };
        break;
      }
    }

    // Pass 3: objects of every event the per-event order reached (up to and including a divergent
    // one, whose refs it checked before replaying it), then request ids of the replayed events.
    // The Task spec is checked now (it is returned); other references wait for their batch, and
    // their findings take the places they would have had.
    let spec: unknown;
    const reached = divergence ? replayed + 1 : records.length;
    for (let i = 0; i < reached; i++) {
      const record = records[i]!;
      const waiting = this.waiting;
      for (const ref of record.refs) {
        if (record.type === 'task.created') {
          const { verdict, finding } = this.checkRef(taskId, base + i + 1, ref, true);
          if (finding) this.found.push(finding);
          if (verdict.ok && verdict.kind === 'task-spec') spec = verdict.body;
        } else {
          waiting.refs.push(ref);
          waiting.taskIds.push(taskId);
          waiting.revisions.push(base + i + 1);
          waiting.at.push(this.found.length);
        }
      }
      if (waiting.refs.length >= this.objectBatch) this.checkWaiting();
      if (i < replayed && record.type === 'dispatch.intend')
        this.claimRequest(String(record.data.clientRequestId), taskId);
    }
    this.events += divergence ? replayed + 1 : counted;
    const ending = divergence ?? stop;
    if (ending) this.found.push(ending);

    const last = base + records.length;
    let failed = ending !== undefined;
    if (!failed && head === undefined) {
      this.found.push({
        code: 'stream_gap',
        taskId,
        revision: last,
        object: 'head',
        message: `task ${taskId} has ${last} events but no head`,
      });
      failed = true;
    } else if (!failed && head && (head.revision !== last || head.digest !== prevDigest)) {
      const code = head.revision > last ? 'stream_gap' : 'stream_corrupt';
      this.found.push({
        code,
        taskId,
        revision: head.revision,
        object: 'head',
        message: `task ${taskId}: head names revision ${head.revision} ${head.digest}, stream ends at ${last} ${prevDigest ?? ''}`,
      });
      failed = true;
    }
    let result: VerifiedTask | undefined;
    if (!failed) {
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
      } else {
        result = { taskId, revision: last, headDigest: prevDigest!, persisted };
        if (keepSnapshot) result.snapshot = snapshot;
        if (spec !== undefined) result.spec = spec;
      }
    }
    actor.stop();
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

  /** Records a request id claimed by a Task (from a replayed `dispatch.intend`). */
  claimRequest(id: string, taskId: string): void {
    (this.requestOwners.get(id) ?? this.requestOwners.set(id, new Set()).get(id)!).add(taskId);
  }

  /**
   * One reference: its object's verdict (remembered per object) and the finding it makes, if any.
   * `read` is the verdict of an object not yet remembered, when the caller read it already.
   */
  private checkRef(
    taskId: string,
    revision: number,
    ref: string,
    used: boolean,
    read?: ObjectVerdict,
  ): { verdict: ObjectVerdict; finding?: Finding } {
    let verdict = this.objects.get(ref);
    // An object first seen by digest alone and now needed whole (a Task spec) is read again.
    if (verdict?.ok && used && verdict.kind === undefined && !this.bodies) verdict = undefined;
    if (!verdict) {
      verdict = read ?? this.verifyObject(ref, used || this.bodies);
      // A missing object is not remembered: each event naming it gets its own finding, as before.
      if (verdict.ok || verdict.code === 'object_corrupt') this.objects.set(ref, verdict);
      else
        return {
          verdict,
          finding: {
            code: 'object_missing',
            taskId,
            revision,
            object: ref,
            message: `task ${taskId} revision ${revision} references missing object ${ref}`,
          },
        };
      return verdict.ok
        ? { verdict }
        : {
            verdict,
            finding: {
              code: verdict.code,
              taskId,
              revision,
              object: ref,
              message: `task ${taskId} revision ${revision}: ${verdict.message}`,
            },
          };
    }
    return verdict.ok
      ? { verdict }
      : {
          verdict,
          finding: { code: 'object_corrupt', taskId, revision, object: ref, message: `object ${ref} is corrupt` },
        };
  }

  /**
   * Checks the waiting references: objects not yet remembered are read in key order (a digest's
   * order is the store's key order), then each reference is taken in event order exactly as
   * `checkRef` would have taken it then, and its finding is put where it would have been.
   */
  private checkWaiting(): void {
    const { refs, taskIds, revisions, at } = this.waiting;
    const n = refs.length;
    if (n === 0) return;
    this.waiting = noneWaiting();
    const read: Array<ObjectVerdict | undefined> = new Array(n);
    let previous: string | undefined;
    let verdict: ObjectVerdict | undefined;
    for (const i of keyOrder(refs)) {
      const ref = refs[i]!;
      if (ref !== previous) {
        previous = ref;
        verdict = this.objects.has(ref) ? undefined : this.verifyObject(ref, this.bodies);
      }
      read[i] = verdict;
    }
    const late: Array<{ at: number; finding: Finding }> = [];
    for (let i = 0; i < n; i++) {
      const { finding } = this.checkRef(taskIds[i]!, revisions[i]!, refs[i]!, false, read[i]);
      if (finding) late.push({ at: at[i]!, finding });
    }
    if (late.length === 0) return;
    // Merge by position: a late finding goes before the finding pushed after its event was reached.
    const merged: Finding[] = [];
    let next = 0;
    for (const { at: position, finding } of late) {
      while (next < position) merged.push(this.found[next++]!);
      merged.push(finding);
    }
    while (next < this.found.length) merged.push(this.found[next++]!);
    this.found.length = 0;
    for (const finding of merged) this.found.push(finding);
  }

  /**
   * Present and matching its digest; with `whole`, also `{kind, body}` with a body its kind's
   * schema accepts (the checks of `EventStore.getObject`). Blobs: present and matching.
   */
  private verifyObject(ref: string, whole: boolean): ObjectVerdict {
    if (!whole && this.source.storedDigest) {
      let stored: ReturnType<NonNullable<VerifySource['storedDigest']>>;
      try {
        stored = this.source.storedDigest(ref);
      } catch (error) {
        return {
          ok: false,
          code: 'object_corrupt',
          message: `cannot read ${JSON.stringify({ object: ref })}: ${(error as Error).message}`,
        };
      }
      if (stored === undefined) return { ok: false, code: 'object_missing', message: `object ${ref} is missing` };
      if (stored !== 'legacy')
        return stored.matches
          ? MATCHES
          : { ok: false, code: 'object_corrupt', message: `${stored.in} ${ref} does not match its digest` };
    }
    let raw: RawObject | undefined;
    try {
      raw = this.source.rawObject(ref);
    } catch (error) {
      return {
        ok: false,
        code: 'object_corrupt',
        message: `cannot decode ${JSON.stringify({ object: ref })}: ${(error as Error).message}`,
      };
    }
    if (raw === undefined) {
      let bytes: Uint8Array | undefined;
      try {
        bytes = this.source.blob(ref);
      } catch (error) {
        return {
          ok: false,
          code: 'object_corrupt',
          message: `blob ${ref} cannot be read: ${(error as Error).message}`,
        };
      }
      if (bytes === undefined) return { ok: false, code: 'object_missing', message: `object ${ref} is missing` };
      return sha256Bytes(bytes) === ref
        ? MATCHES
        : { ok: false, code: 'object_corrupt', message: `blob ${ref} does not match its digest` };
    }
    if (!objectMatches(raw, ref))
      return { ok: false, code: 'object_corrupt', message: `object ${ref} does not match its digest` };
    if (!whole) return MATCHES;
    const value = objectValue(raw);
    if (!value) return { ok: false, code: 'object_corrupt', message: `object ${ref} does not match its digest` };
    const body = this.kinds[value.kind]?.safeParse(value.body);
    if (!body?.success)
      return { ok: false, code: 'object_corrupt', message: `object ${ref} is not a valid ${value.kind}` };
    return value.kind === 'task-spec'
      ? { ok: true, kind: 'task-spec', body: body.data }
      : { ok: true, kind: value.kind };
  }
}

/**
 * Indexes of `refs` in digest order, by the first 32 bits of each hex digest (ties in any order),
 * sorted as numbers: sorting the bench root's 744k digest strings themselves took ~2 s, this ~0.15 s.
 * Digests were checked by the event record's schema; anything else sorts first.
 */
function keyOrder(refs: string[]): Float64Array {
  const SLOTS = 2 ** 21; // > MAX_OBJECT_BATCH plus one event's references
  const keys = new Float64Array(refs.length);
  for (let i = 0; i < refs.length; i++) keys[i] = hexPrefix(refs[i]!) * SLOTS + i;
  keys.sort();
  for (let i = 0; i < keys.length; i++) keys[i] = keys[i]! % SLOTS;
  return keys;
}

/** The 8 hex digits after `sha256:` as a number; 0 when they are not lowercase hex. */
function hexPrefix(ref: string): number {
  let value = 0;
  for (let j = 7; j < 15; j++) {
    const c = ref.charCodeAt(j);
    const digit = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;
    if (digit < 0) return 0;
    value = value * 16 + digit;
  }
  return value;
}

function sameDisposition(
  taken: { admitted: boolean; code?: string },
  recorded: { admitted: boolean; code?: string },
): boolean {
  return taken.admitted === recorded.admitted && taken.code === recorded.code;
}

function issueAt(error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> }): string {
  const issue = error.issues[0];
  return `${issue?.path.map(String).join('.')}: ${issue?.message}`;
}

/**
 * Findings for request/evidence identities claimed by more than one Task (events and index).
 * `indexEntries` gives a kind's claims in key order (as the index stores them), so the owners of
 * one key arrive together: the check holds one key's owners at a time, not the whole index.
 */
export function identityFindings(
  requestOwners: Map<string, Set<string>>,
  indexEntries: (kind: 'request' | 'evidence') => Iterable<{ key: string; taskId: string }>,
): Finding[] {
  const findings: Finding[] = [];
  for (const [id, owners] of requestOwners) if (owners.size > 1) findings.push(identityFinding('request', id, owners));
  for (const kind of ['request', 'evidence'] as const) {
    let key: string | undefined;
    let first = '';
    let owners: Set<string> | undefined;
    const flush = () => {
      if (key !== undefined && owners && !(kind === 'request' && (requestOwners.get(key)?.size ?? 0) > 1))
        findings.push(identityFinding(kind, key, owners));
    };
    for (const entry of indexEntries(kind)) {
      if (entry.key !== key) {
        flush();
        key = entry.key;
        first = entry.taskId;
        owners = undefined;
      } else if (entry.taskId !== first) {
        (owners ??= new Set([first])).add(entry.taskId);
      }
    }
    flush();
  }
  return findings;
}

function identityFinding(kind: string, key: string, owners: Set<string>): Finding {
  const list = [...owners].sort();
  return {
    code: 'identity_conflict',
    taskId: list.join(','),
    object: `${kind} ${key}`,
    message: `${kind} ${key} is claimed by tasks ${list.join(', ')}`,
  };
}

/**
 * `machineEventOf(record, revision)` built in `record.data` itself: the verifier owns the parsed
 * record (`safeParseEventRecord` and zod both copy `data`) and has hashed it already, so the
 * copy the kernel makes is not needed here. Same event: `type`, `revision` and `origin` win over
 * members of those names in `data`, as in the spread.
 */
function ownedMachineEvent(record: EventRecord, revision: number): TaskEvent {
  const event = record.data as Record<string, unknown>;
  event.type = record.type;
  event.revision = revision;
  event.origin = record.origin;
  return event as unknown as TaskEvent;
}
