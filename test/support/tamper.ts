import { open, type RootDatabase } from 'lmdb';
import { join } from 'node:path';
import { createSupervisor } from '../../kernel/supervisor.js';
import { SPEC, driveToRunning, observeRun } from './tasks.js';
import { tempDir } from './temp.js';

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

/**
 * Builds a healthy state root with two Tasks (task-a has run and holds evidence, task-b is
 * running), for tamper tests that each damage their own copy of it.
 */
export async function twoTaskRoot(): Promise<{ root: string; specDigest: string; requestId: string }> {
  const root = tempDir();
  const sup = createSupervisor({ state: root });
  await sup.start();
  await sup.createTask({ ...SPEC, taskId: 'task-a' });
  const run = await driveToRunning(sup, 'task-a', 1);
  await observeRun(sup, 'task-a', 1, run, { 'diagnosis.json': '{"location":"alloc.js:12"}' });
  await sup.createTask({ ...SPEC, taskId: 'task-b' });
  await driveToRunning(sup, 'task-b', 1);
  const specDigest = sup.getTask('task-a')!.context.specDigest!;
  await sup.stop();
  return { root, specDigest, requestId: run.clientRequestId };
}
