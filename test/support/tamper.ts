import { open, type RootDatabase } from 'lmdb';
import { join } from 'node:path';

/**
 * Opens a stopped state root's LMDB environment directly, bypassing the store, to damage it the
 * way a disk, an operator or a bug would. Databases are opened raw (`binary`) where bytes matter.
 */
export async function tamper(root: string, fn: (env: RootDatabase) => void): Promise<void> {
  const env = open({ path: join(root, 'lmdb') });
  try {
    env.transactionSync(() => fn(env));
    await env.flushed;
  } finally {
    await env.close();
  }
}

/** Flips one bit of a stored value, in the middle of its bytes. */
export function flipByte(env: RootDatabase, dbName: string, key: unknown, options: object = {}): void {
  const db = env.openDB(dbName, { encoding: 'binary', ...options });
  const bytes = db.getBinary(key as never);
  if (!bytes) throw new Error(`no ${dbName} value at ${JSON.stringify(key)}`);
  const copy = Buffer.from(bytes);
  const at = Math.floor(copy.length / 2);
  copy[at] = copy[at]! ^ 0x01;
  db.putSync(key as never, copy);
}
