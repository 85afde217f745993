import { createHash } from 'node:crypto';
import type { RootDatabase } from 'lmdb';
import { OBJECT_KINDS } from '../../objects/index.js';
import type { Supervisor } from '../../kernel/supervisor.js';
import { EventStore } from '../../store/index.js';

const DATABASES = ['objects', 'blobs', 'events', 'heads', 'projections', 'indexes', 'meta'] as const;

/** sha256 over the raw bytes of every key and value in every Host database of an LMDB environment. */
export function digestEnv(env: RootDatabase): string {
  const hash = createHash('sha256');
  for (const name of DATABASES) {
    const db = env.openDB(name, { encoding: 'binary', keyEncoding: 'binary' } as never);
    hash.update(`\0db ${name}\0`);
    for (const { key, value } of db.getRange({})) {
      hash.update(key as Buffer);
      hash.update('\0');
      hash.update(value as Buffer);
      hash.update('\0');
    }
  }
  return hash.digest('hex');
}

/** Digest of the store a running supervisor holds (reached through its private field: test-only). */
export function digestOfSupervisor(sup: Supervisor): string {
  const store = (sup as unknown as { store: EventStore }).store;
  return digestEnv(store.databases.env);
}

/** Digest of a state root no process writes to now, opened read-only. */
export async function digestOfRoot(root: string): Promise<string> {
  const store = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
  try {
    return digestEnv(store.databases.env);
  } finally {
    await store.close();
  }
}
