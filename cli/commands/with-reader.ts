import type { ObjectKinds, EventStore } from '../../store/index.js';
import { cliErrorOf } from '../cli-io.js';

/**
 * Opens the store read-only (no lock), runs `fn` and closes it: the commands that read a state
 * root work beside a running supervisor. `kinds` are the object kinds it may read (`list` reads
 * none, so it does not load their schemas). A store that cannot be opened is the store's error as
 * the CLI reports it. The store's module is imported when a command runs (cli-io.ts).
 */
export async function withReader<T>(
  state: string | undefined,
  kinds: ObjectKinds,
  fn: (store: EventStore) => T | Promise<T>,
): Promise<T> {
  const { EventStore, StoreError, resolveStateRoot } = await import('../../store/index.js');
  let store: EventStore;
  try {
    store = EventStore.open({ root: resolveStateRoot(state), kinds, readOnly: true });
  } catch (error) {
    if (error instanceof StoreError) throw cliErrorOf(error);
    throw error;
  }
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}
