import { EffectReceiptObject } from '../objects/index.js';
import type { ObjectKinds, RawObject } from '../store/index.js';
import { objectMatches, objectValue } from '../store/index.js';
import { sha256Bytes } from './digest.js';
import type { Finding } from './errors.js';
import type { VerifySource } from './source.js';

/**
 * The object checks of a verification run: each referenced object's verdict, remembered per
 * object, and the references waiting to be checked in digest order (see `OBJECT_BATCH`). The
 * verifier (verifier.ts) owns the findings; these checks put theirs in its list, each where the
 * per-event order would have put it.
 */

/** A verified object; the body is kept for Task specs only (the supervisor needs them, nothing else does). */
export type ObjectVerdict =
  | { ok: true; kind?: string; body?: unknown }
  | { ok: false; code: 'object_missing' | 'object_corrupt'; message: string };
/** The verdict of an object checked by digest alone: one shared value (a rebuild remembers a verdict per object, ~1M at 1M events). */
const MATCHES: ObjectVerdict = Object.freeze({ ok: true });
const NO_EVIDENCE: readonly string[] = Object.freeze([]);

/**
 * References whose objects are checked per batch, looked up in key (digest) order. On the bench's
 * 1M-event root (744k references, each to its own object, random over a 1.46 GB map) a lookup in
 * event order cost ~8 µs inside a rebuild and ~6 µs in digest order, back to back.
 */
const OBJECT_BATCH = 1 << 18;
const MAX_OBJECT_BATCH = 1 << 20;

/** References waiting for their batch, as parallel arrays (no object per reference). */
export interface Waiting {
  refs: string[];
  taskIds: string[];
  revisions: number[];
  /** `findings.length` when the event was reached: the reference's finding, if any, goes there. */
  at: number[];
}

const noneWaiting = (): Waiting => ({ refs: [], taskIds: [], revisions: [], at: [] });

export class ObjectChecks {
  /** References not yet checked; the verifier appends to these arrays as it reaches each event. */
  waiting: Waiting = noneWaiting();
  /** Past this many waiting references, the verifier has them checked (`checkWaiting`). */
  readonly batch: number;
  private readonly objects = new Map<string, ObjectVerdict>();
  /** Per `effect-receipt` object read for its evidence files: their digests. */
  private readonly evidence = new Map<string, readonly string[]>();
  private readonly bodies: boolean;

  constructor(
    private readonly source: VerifySource,
    private readonly kinds: ObjectKinds,
    /** The verifier's findings, in Task and event order. */
    private readonly found: Finding[],
    options: { bodies?: boolean; objectBatch?: number },
  ) {
    this.bodies = options.bodies ?? false;
    this.batch = Math.max(1, Math.min(options.objectBatch ?? OBJECT_BATCH, MAX_OBJECT_BATCH));
  }

  /** Distinct objects found so far (of the references checked). */
  get size(): number {
    return this.objects.size;
  }

  /**
   * One reference: its object's verdict (remembered per object) and the finding it makes, if any.
   * `read` is the verdict of an object not yet remembered, when the caller read it already.
   */
  checkRef(
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
   * The blobs of the evidence files an `effect-receipt` object names (`evidence[].digest`): an
   * event naming the receipt references them too. None when the object cannot be read, does not
   * match its digest or is no receipt: the receipt's own check says what is wrong with it.
   */
  evidenceOf(ref: string): readonly string[] {
    let digests = this.evidence.get(ref);
    if (digests) return digests;
    digests = NO_EVIDENCE;
    try {
      const raw = this.source.rawObject(ref);
      const value = raw !== undefined && objectMatches(raw, ref) ? objectValue(raw) : undefined;
      const body = value?.kind === 'effect-receipt' ? EffectReceiptObject.safeParse(value.body) : undefined;
      if (body?.success && body.data.evidence?.length) digests = body.data.evidence.map((f) => f.digest);
    } catch {
      // Unreadable: its own check finds it.
    }
    this.evidence.set(ref, digests);
    return digests;
  }

  /**
   * Checks the waiting references: objects not yet remembered are read in key order (a digest's
   * order is the store's key order), then each reference is taken in event order exactly as
   * `checkRef` would have taken it then, and its finding is put where it would have been.
   */
  checkWaiting(): void {
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
