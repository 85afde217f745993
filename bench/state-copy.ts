import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { OBJECT_KINDS } from '../objects/index.js';
import { EventStore, checkFormat, copyEnvironment, lockHolder } from '../store/index.js';
import type { GivenHistory } from './report/results-model.js';

const RUNTIME_ENV = join('runtime', 'runtime.lmdb');

/**
 * Copies the environment files as they are: used while no process holds the state-root lock
 * (every writer, supervisor or writing command, takes it), when the files hold the last commit.
 * Unlike an LMDB open, this writes nothing to the root (an LMDB reader records itself in `lock.mdb`).
 */
function copyFiles(source: string, root: string): void {
  mkdirSync(join(root, 'lmdb'), { recursive: true });
  cpSync(join(source, 'lmdb', 'data.mdb'), join(root, 'lmdb', 'data.mdb'));
  if (existsSync(join(source, RUNTIME_ENV))) {
    mkdirSync(dirname(join(root, RUNTIME_ENV)), { recursive: true });
    cpSync(join(source, RUNTIME_ENV), join(root, RUNTIME_ENV));
  }
}

async function copyEnvs(source: string, root: string): Promise<void> {
  await copyEnvironment(join(source, 'lmdb'), join(root, 'lmdb'));
  if (existsSync(join(source, RUNTIME_ENV))) await copyEnvironment(join(source, RUNTIME_ENV), join(root, RUNTIME_ENV));
}

/**
 * A private copy of the state root `source` for the recovery and floor scenarios to boot and scan
 * (a boot writes checkpoints; the copy takes them, `source` is only read): the Host's LMDB, the
 * Runtime's and `format.json`, under a new directory in `under`. Workspaces are not copied: boot
 * reads none. While no process holds the root's lock its files are copied as they are, and the
 * root is left byte for byte as it was; while one does (a serving supervisor), each environment is
 * copied as of one read transaction, as `ordivon backup` does, and LMDB records that reader in
 * `lmdb/lock.mdb` as it does for every reader. A lock taken during the file copy makes it copy
 * again that way. Throws the store's `state_missing` / `format_unknown` before copying anything.
 */
export async function copyStateRoot(source: string, under: string): Promise<GivenHistory> {
  checkFormat(source, false);
  mkdirSync(under, { recursive: true });
  const root = join(mkdtempSync(join(under, 'state-copy-')), 'state');
  try {
    let copied: GivenHistory['copied'] = 'files';
    // 0700, as the Host makes a root: one other local accounts may enter is refused state_root_shared.
    mkdirSync(root, { mode: 0o700 });
    const free = lockHolder(source) === null;
    if (free) copyFiles(source, root);
    if (!free || lockHolder(source) !== null) {
      rmSync(root, { recursive: true, force: true });
      mkdirSync(root, { mode: 0o700 });
      await copyEnvs(source, root);
      copied = 'read transaction';
    }
    cpSync(join(source, 'format.json'), join(root, 'format.json'));
    const store = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
    let tasks = 0;
    let events = 0;
    try {
      for (const taskId of store.taskIds()) {
        tasks++;
        events += store.head(taskId)?.revision ?? 0;
      }
    } finally {
      await store.close();
    }
    return { root, source, tasks, events, copied };
  } catch (error) {
    rmSync(dirname(root), { recursive: true, force: true });
    throw error;
  }
}

/** Removes a copy made by `copyStateRoot`. */
export function removeStateCopy(copy: GivenHistory): void {
  rmSync(dirname(copy.root), { recursive: true, force: true });
}
