import type { Key } from 'lmdb';
import type { EventStore } from './event-store.js';

/**
 * Cursor walks over the history and the heads, for verification (recovery/, doctor): values as
 * stored, not parsed, and reads that keep going past a value that cannot be decoded, so one
 * damaged record never hides another Task. They iterate lmdb's cursors directly.
 */

/** One stored event as read: its key's revision and either the decoded value or why decoding failed. */
export type RawEvent =
  { revision: number; value: unknown; error?: undefined } | { revision: number; value?: undefined; error: string };

const MAX_REVISION = Number.MAX_SAFE_INTEGER;

/** A stream key `[taskId, revision]` inside the range a per-stream read covers (revision 1 up to MAX). */
function streamKey(
  key: unknown,
): { taskId: string; revision: number } | { taskId: string; revision?: undefined } | undefined {
  if (!Array.isArray(key) || typeof key[0] !== 'string') return undefined;
  const revision = key[1];
  return typeof revision === 'number' && revision >= 1 && revision < MAX_REVISION
    ? { taskId: key[0], revision }
    : { taskId: key[0] };
}

const sameKey = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Every event stream whose Task id is in [from, to), in key order, read through one cursor over
 * the `events` database (a range scan costs about 0.7× the same events read stream by stream).
 * Yields each Task id that has any key, with the events a per-stream read would give: revisions
 * 1 up to MAX_SAFE_INTEGER, in order. A value that cannot be decoded ends its stream with an
 * `error` entry; the scan resumes at the next Task, so one bad record never hides another Task.
 * `fromRevision` starts the first stream there (a tail read of one stream).
 */
export function* scanStreams(
  store: EventStore,
  from?: string,
  to?: string,
  fromRevision?: number,
): Generator<{ taskId: string; events: RawEvent[] }> {
  const events = store.databases.events;
  const end = to === undefined ? ['\uffff'] : [to];
  let start: Key = from === undefined ? [''] : fromRevision === undefined ? [from] : [from, fromRevision];
  let taskId: string | undefined;
  let group: RawEvent[] = [];
  let lastKey: Key | undefined;
  for (;;) {
    const iterator = events.getRange({ start, end })[Symbol.iterator]();
    let resumeAt: Key | undefined;
    for (;;) {
      let item: IteratorResult<{ key: Key; value: unknown }>;
      try {
        item = iterator.next();
      } catch (error) {
        const failing = keysAfter(store, lastKey ?? start, end, lastKey !== undefined);
        const k = failing[0];
        if (k === undefined) break; // nothing readable left
        const stream = streamKey(k);
        if (stream && stream.taskId !== taskId) {
          if (taskId !== undefined) yield { taskId, events: group };
          taskId = stream.taskId;
          group = [];
        }
        if (stream?.revision !== undefined) {
          group.push({ revision: stream.revision, error: (error as Error).message });
          resumeAt = [stream.taskId + '\u0000'];
        } else {
          resumeAt = failing[1];
        }
        lastKey = k;
        break;
      }
      if (item.done) break;
      const { key, value } = item.value;
      lastKey = key;
      const stream = streamKey(key);
      if (!stream) continue;
      if (stream.taskId !== taskId) {
        if (taskId !== undefined) yield { taskId, events: group };
        taskId = stream.taskId;
        group = [];
      }
      // After a decode error the rest of that stream is not read (the verifier stops at the error).
      if (stream.revision !== undefined && group.at(-1)?.error === undefined)
        group.push({ revision: stream.revision, value });
    }
    if (resumeAt === undefined) break;
    start = resumeAt;
  }
  if (taskId !== undefined) yield { taskId, events: group };
}

/** The first keys after `key` (or from it, when not `exclusive`), without decoding values. */
function keysAfter(store: EventStore, key: Key, end: Key, exclusive: boolean): Key[] {
  const out: Key[] = [];
  for (const k of store.databases.events.getKeys({ start: key, end, limit: 3 })) {
    if (exclusive && out.length === 0 && sameKey(k, key)) continue;
    out.push(k);
    if (out.length === 2) break;
  }
  return out;
}

/** Task ids with a head, in key order, within [from, to). */
export function headIds(store: EventStore, from?: string, to?: string): string[] {
  const ids: string[] = [];
  for (const key of store.databases.heads.getKeys({
    ...(from !== undefined ? { start: from } : {}),
    ...(to !== undefined ? { end: to } : {}),
  })) {
    if (typeof key === 'string') ids.push(key);
  }
  return ids;
}

/**
 * Every head as stored (not parsed), in Task id order within [from, to), read with one cursor
 * (lmdb's, as it is). A value the cursor cannot decode throws from the iteration: callers then
 * read key by key (`headIds`, `EventStore.rawHead`), so the head that fails is named.
 */
export function headRecords(store: EventStore, from?: string, to?: string): Iterable<{ key: string; value: unknown }> {
  return store.databases.heads.getRange({
    ...(from !== undefined ? { start: from } : {}),
    ...(to !== undefined ? { end: to } : {}),
  });
}

/**
 * Where a stream ends relative to `revision`: whether its last event is exactly `revision`, and —
 * when it is — the Task id of the next stream in key order (null: none follows; undefined: the
 * next key is not a stream key). One cursor step over two keys: it answers "the head's event
 * exists and none follows it" and tells `streamIdsAfterHeads` what comes next, so a checkpointed
 * start touches each stream's end once.
 */
export function streamEnd(
  store: EventStore,
  taskId: string,
  revision: number,
): { atHead: boolean; next?: string | null } {
  const keys: unknown[] = [];
  for (const key of store.databases.events.getKeys({ start: [taskId, revision], end: ['\uffff'], limit: 2 }))
    keys.push(key);
  const [first, second] = keys;
  const atHead =
    Array.isArray(first) &&
    first[0] === taskId &&
    first[1] === revision &&
    !(Array.isArray(second) && second[0] === taskId);
  if (!atHead) return { atHead };
  if (second === undefined) return { atHead, next: null };
  return Array.isArray(second) && typeof second[0] === 'string' ? { atHead, next: second[0] } : { atHead };
}

/**
 * Task ids that have events but are not in `known`, found by skipping from stream to stream
 * (one key lookup per stream, whatever its length), in key order. `after` holds, for streams whose
 * end was already read (`streamEnd`), the id of the stream that follows (null: none): those are
 * stepped over without a lookup.
 */
export function* streamIdsAfterHeads(
  store: EventStore,
  known: ReadonlySet<string>,
  after: ReadonlyMap<string, string | null> = new Map(),
): Generator<string> {
  let start: Key = [''];
  for (;;) {
    let next: Key | undefined;
    for (const key of store.databases.events.getKeys({ start, end: ['\uffff'], limit: 1 })) next = key;
    if (next === undefined) return;
    if (Array.isArray(next) && typeof next[0] === 'string') {
      let id: string = next[0];
      for (;;) {
        if (!known.has(id)) yield id;
        const following = after.get(id);
        if (following === null) return;
        // A hint names a later stream; anything else (never expected) is looked up instead.
        if (following === undefined || !(following > id)) break;
        id = following;
      }
      start = [id + '\u0000'];
    } else {
      // Not a stream key: step past it.
      let stepped: Key | undefined;
      let first = true;
      for (const key of store.databases.events.getKeys({ start: next, end: ['\uffff'], limit: 2 })) {
        if (first && sameKey(key, next)) {
          first = false;
          continue;
        }
        stepped = key;
        break;
      }
      if (stepped === undefined) return;
      start = stepped;
    }
  }
}
