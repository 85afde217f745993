import { StoreError } from './errors.js';
import type { EventStore } from './event-store.js';

/**
 * Host data kept in the store's `meta` database beside the store's own records (stream warnings,
 * namespace `warning`): records keyed `[namespace, id]`, for data derived from the history that a
 * read-only open or an older root must not need a new LMDB database for (recovery's checkpoints).
 * The store gives them no meaning: values are what the caller wrote (msgpack-encoded).
 */

/**
 * The records of one namespace in id order (of the ids in [from, to) when given), read with one
 * cursor. A value the cursor cannot decode stops it: the rest are read key by key, and that one
 * comes out as undefined, so one damaged record never hides the others.
 */
export function* metaEntries(
  store: EventStore,
  namespace: string,
  from = '',
  to = '\uffff',
): Generator<{ id: string; value: unknown }> {
  const { meta } = store.databases;
  let last: string | undefined;
  try {
    for (const { key, value } of meta.getRange({ start: [namespace, from], end: [namespace, to] })) {
      last = key[1];
      yield { id: key[1], value };
    }
    return;
  } catch {
    // read on below, one key at a time
  }
  for (const key of meta.getKeys({
    start: [namespace, last === undefined ? from : last + '\u0000'],
    end: [namespace, to],
  })) {
    let value: unknown;
    try {
      value = meta.get(key);
    } catch {
      value = undefined;
    }
    yield { id: key[1], value };
  }
}

/** The writes of one `updateMeta` transaction. */
export interface MetaBatch {
  /** Writes `value` under `[namespace, id]`. */
  put(namespace: string, id: string, value: unknown): void;
  /** Removes every record of `namespace`. */
  clear(namespace: string): void;
}

/**
 * Writes meta records in one transaction and resolves once it is durable (committed and flushed).
 * `batch` runs inside the transaction, so the store's reads it makes see what the transaction
 * sees and no other write comes between them and its writes. Fails `read_only` on a read-only
 * store, before anything runs.
 */
export async function updateMeta(store: EventStore, batch: (meta: MetaBatch) => void): Promise<void> {
  if (store.readOnly)
    throw new StoreError('read_only', `the store at ${store.root} is open read-only`, { root: store.root });
  const { env, meta } = store.databases;
  // Each put and remove joins the transaction; its promise is the commit's, awaited below.
  await env.transaction(() =>
    batch({
      put: (namespace, id, value) => void meta.put([namespace, id], value),
      clear: (namespace) => {
        for (const key of meta.getKeys({ start: [namespace, ''], end: [namespace, '\uffff'] })) void meta.remove(key);
      },
    }),
  );
  await env.flushed;
}
