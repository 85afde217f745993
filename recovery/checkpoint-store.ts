import { z } from 'zod';
import { TASK_MACHINE_VERSION } from '../machines/index.js';
import { TaskSpec } from '../objects/index.js';
import { Digest, metaEntries, updateMeta, type EventStore } from '../store/index.js';
import { sha256Bytes } from './digest.js';
import { machineCodeHash } from './machine-code.js';

/**
 * Verified checkpoints: per Task, the state the Host proved at a revision — by a full replay, a
 * checked tail replay, or its own live actor at a clean stop — bound to the head digest and to
 * the bytes of the projection stored at that revision. A checkpointed start trusts a Task whose
 * head and projection still match its checkpoint, and replays only the events after it.
 *
 * Checkpoints are derived data kept in the store's `meta` database under `['checkpoint', taskId]`
 * (no new LMDB database, so read-only opens and older roots need nothing), as JSON text:
 * `JSON.parse` reads these ~1.5 kB records about 1.5× faster than lmdb's default msgpack, and a
 * checkpointed start reads one per Task. Losing or damaging one costs time, never correctness:
 * such a Task is replayed in full.
 */
export const Checkpoint = z.object({
  revision: z.number().int().positive(),
  /** Digest of the event at `revision` (what the head named when the checkpoint was taken). */
  headDigest: Digest,
  machineVersion: z.number().int().positive(),
  /**
   * `machineCodeHash()` of the process that wrote it (machine-code.ts); absent in checkpoints
   * written before it was recorded, which are then from other machine code: never trusted.
   */
  codeHash: Digest.optional(),
  state: z.string(),
  /** Persisted XState snapshot at `revision`. */
  snapshot: z.record(z.string(), z.unknown()),
  /** sha256 of the projection's stored bytes at `revision`. */
  projectionDigest: Digest,
  /** The Task's spec, verified when first checkpointed, so a checkpointed start reads no objects. */
  spec: TaskSpec,
});
export type Checkpoint = z.infer<typeof Checkpoint>;

const DIGEST = /^sha256:[0-9a-f]{64}$/;
const positiveInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
const plainRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' &&
  v !== null &&
  Object.getPrototypeOf(v) === Object.prototype &&
  Object.getOwnPropertySymbols(v).length === 0 &&
  !Object.hasOwn(v, '__proto__') &&
  !Object.hasOwn(v, 'constructor');

/**
 * `Checkpoint.safeParse(value)` for the checkpointed start (one per Task): the same result, with
 * the plain members checked by hand and only the spec through zod (`TaskSpec`). Anything it does
 * not plainly accept goes to `Checkpoint.safeParse`, so rejections and edge cases are zod's own
 * (test/recovery/checkpoint-parse.test.ts compares the two).
 */
export function safeParseCheckpoint(value: unknown): { success: true; data: Checkpoint } | { success: false } {
  if (plainRecord(value)) {
    const { revision, headDigest, machineVersion, codeHash, state, snapshot, projectionDigest, spec } = value;
    if (
      positiveInt(revision) &&
      (!Object.hasOwn(value, 'codeHash') || (typeof codeHash === 'string' && DIGEST.test(codeHash))) &&
      typeof headDigest === 'string' &&
      DIGEST.test(headDigest) &&
      positiveInt(machineVersion) &&
      typeof state === 'string' &&
      plainRecord(snapshot) &&
      typeof projectionDigest === 'string' &&
      DIGEST.test(projectionDigest)
    ) {
      const parsedSpec = TaskSpec.safeParse(spec);
      if (parsedSpec.success) {
        return {
          success: true,
          data: {
            revision,
            headDigest,
            machineVersion,
            ...(codeHash === undefined ? {} : { codeHash: codeHash as string }),
            state,
            snapshot: { ...snapshot },
            projectionDigest,
            spec: parsedSpec.data,
          },
        };
      }
    }
  }
  return Checkpoint.safeParse(value);
}

const KEY = 'checkpoint';

/**
 * Checkpoint records in Task id order (of the Tasks in [from, to) when given), read with one
 * cursor; `value` is the decoded JSON, or undefined if it is not JSON text. A value the cursor
 * cannot decode stops it: the rest are read key by key, and that one is undefined (its Task is
 * replayed in full, like a Task without a checkpoint).
 */
export function* checkpointEntries(
  store: EventStore,
  from = '',
  to = '\uffff',
): Generator<{ taskId: string; value: unknown }> {
  for (const { id, value } of metaEntries(store, KEY, from, to))
    yield { taskId: id, value: typeof value === 'string' ? parseJson(value) : undefined };
}

/** Checkpoint records (decoded, unparsed) by Task id. */
export function readCheckpoints(store: EventStore): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const { taskId, value } of checkpointEntries(store)) out.set(taskId, value);
  return out;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** sha256 of a projection's stored bytes, or undefined when there is none. */
export function projectionBytesDigest(store: EventStore, taskId: string): string | undefined {
  return store.projectionSha256(taskId);
}

export interface CheckpointInput {
  taskId: string;
  revision: number;
  headDigest: string;
  state: string;
  snapshot: Record<string, unknown>;
  spec: TaskSpec;
  /**
   * sha256 of the projection's bytes at `revision`, when the caller hashed them then (a live Task
   * checkpointed right after its commit, whose projection may have moved on by the write).
   */
  projectionDigest?: string;
}

/**
 * Writes checkpoints for Tasks whose state was just verified, binding each to the projection
 * bytes stored now — or to those its entry names (`projectionDigest`). A Task whose projection is
 * absent or at another revision gets none (its next start replays it). Resolves once durable with
 * the ids of the Tasks checkpointed; writes nothing on a read-only store. If the process dies
 * before the commit, the old checkpoints stay and the next start replays longer tails.
 */
export async function writeCheckpoints(store: EventStore, entries: Iterable<CheckpointInput>): Promise<string[]> {
  if (store.readOnly) return [];
  const written: string[] = [];
  const codeHash = machineCodeHash();
  // The projections are read inside the transaction: no append comes between a read and its write.
  await updateMeta(store, (meta) => {
    for (const entry of entries) {
      let projectionDigest = entry.projectionDigest;
      if (projectionDigest === undefined) {
        const bytes = store.projectionBytes(entry.taskId);
        const stored =
          bytes === undefined ? undefined : (store.rawProjection(entry.taskId) as { revision?: unknown } | undefined);
        if (bytes === undefined || stored?.revision !== entry.revision) continue;
        projectionDigest = sha256Bytes(bytes);
      }
      const record: Checkpoint = {
        revision: entry.revision,
        headDigest: entry.headDigest,
        machineVersion: TASK_MACHINE_VERSION,
        codeHash,
        state: entry.state,
        snapshot: entry.snapshot,
        projectionDigest,
        spec: entry.spec,
      };
      meta.put(KEY, entry.taskId, JSON.stringify(record));
      written.push(entry.taskId);
    }
  });
  return written;
}

/** Removes every checkpoint (the next checkpointed start replays every Task in full). */
export async function clearCheckpoints(store: EventStore): Promise<void> {
  await updateMeta(store, (meta) => meta.clear(KEY));
}
