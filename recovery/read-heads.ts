import { headIds, headRecords, type EventStore } from '../store/index.js';

/** A head to check: its Task id and, when the cursor over the heads read it, its stored value. */
export type HeadEntry = { taskId: string; read?: () => unknown };

/**
 * Every head, in Task id order, read with one cursor, and whether the events database holds
 * exactly as many entries as their revisions add up to (LMDB's own count, read in O(1)). Not
 * counted when a head does not read as a record with a positive integer revision: the per-Task
 * checks then say which. A value the cursor cannot decode ends it: each head is then read on its
 * own, so the verifier names the one that fails.
 */
export function readHeads(
  store: EventStore,
  range: { from?: string; to?: string } = {},
): { heads: HeadEntry[]; counted: boolean } {
  const heads: HeadEntry[] = [];
  let sum = 0;
  let summable = true;
  try {
    for (const { key, value } of headRecords(store, range.from, range.to)) {
      if (typeof key !== 'string') continue;
      heads.push({ taskId: key, read: () => value });
      const revision =
        typeof value === 'object' && value !== null ? (value as { revision?: unknown }).revision : undefined;
      if (typeof revision === 'number' && Number.isSafeInteger(revision) && revision > 0) sum += revision;
      else summable = false;
    }
  } catch {
    return { heads: headIds(store, range.from, range.to).map((taskId) => ({ taskId })), counted: false };
  }
  // The count covers the whole history: a range's heads are never `counted`.
  return {
    heads,
    counted: range.from === undefined && range.to === undefined && summable && store.eventCount() === sum,
  };
}
