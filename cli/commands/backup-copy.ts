import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { OBJECT_KINDS } from '../../objects/index.js';
import { rebuildAll, type Finding } from '../../recovery/index.js';
import {
  EventStore,
  StoreError,
  acquireLock,
  checkFormat,
  checkPagesBeforeOpen,
  copyEnvironment,
  makePrivateDir,
  protectStateRoot,
  resolveStateRoot,
} from '../../store/index.js';
import { CliError, EXIT, cliErrorOf, emit, throttledProgress, type Io } from '../cli-io.js';

// What `ordivon backup` and `restore` do (backup.ts defines the commands and loads this when one runs).

const RUNTIME_ENV = join('runtime', 'runtime.lmdb');

function isEmptyDir(path: string): boolean {
  return !existsSync(path) || readdirSync(path).length === 0;
}

/** Runs the boot checks on a copy (saying how far it got every 2 s, without --json); returns its counts or the findings. */
async function check(
  root: string,
  io: Io,
  command: string,
): Promise<{ tasks: number; events: number; findings: Finding[] }> {
  const store = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
  try {
    const report = rebuildAll(store, {
      bodies: true,
      ...(io.json ? {} : { onProgress: throttledProgress((line) => io.err(line), `${command}: checked `) }),
    });
    return { tasks: report.tasks.length, events: report.events, findings: report.findings };
  } finally {
    await store.close();
  }
}

function storeFailure(error: unknown): never {
  if (error instanceof StoreError) throw cliErrorOf(error);
  throw error;
}

/** `ordivon backup DEST` (backup.ts). */
export async function backupTo(values: { state?: string | undefined; dest: string }, io: Io): Promise<number> {
  const root = resolveStateRoot(values.state);
  const dest = resolve(values.dest);
  if (!isEmptyDir(dest)) throw new CliError('backup_exists', `${dest} is not empty; back up into a new directory`);
  try {
    checkFormat(root, false);
    // The source's pages before lmdb maps it to copy (a damaged one: storage_corrupt, never a signal).
    checkPagesBeforeOpen(root, true);
  } catch (error) {
    storeFailure(error);
  }
  const staged = `${dest}.partial-${process.pid}`;
  rmSync(staged, { recursive: true, force: true });
  try {
    // A backup holds what the root holds: private like it from the start (store/private-root.ts).
    makePrivateDir(staged);
    await copyEnvironment(join(root, 'lmdb'), join(staged, 'lmdb'));
    if (existsSync(join(root, RUNTIME_ENV))) await copyEnvironment(join(root, RUNTIME_ENV), join(staged, RUNTIME_ENV));
    cpSync(join(root, 'format.json'), join(staged, 'format.json'));
    if (existsSync(join(root, 'workspaces')))
      cpSync(join(root, 'workspaces'), join(staged, 'workspaces'), { recursive: true, verbatimSymlinks: true });
    const checked = await check(staged, io, 'backup');
    if (checked.findings.length > 0)
      throw new CliError(checked.findings[0]!.code, `the copy failed its check: ${checked.findings[0]!.message}`);
    const manifest = {
      backup: 'ordivon-state',
      source: root,
      at: new Date().toISOString(),
      tasks: checked.tasks,
      events: checked.events,
    };
    writeFileSync(join(staged, 'backup.json'), JSON.stringify(manifest, null, 2) + '\n', { mode: 0o600 });
    // Copied files keep their source's mode (a root an older build wrote: 0644).
    protectStateRoot(staged);
    // Published by rename: DEST is either absent/empty or a complete, checked backup.
    mkdirSync(dirname(dest), { recursive: true });
    rmSync(dest, { recursive: true, force: true });
    renameSync(staged, dest);
    emit(
      io,
      { dest, ...manifest },
      () => `backed up ${checked.tasks} tasks (${checked.events} events) from ${root} to ${dest}`,
    );
    return EXIT.ok;
  } catch (error) {
    rmSync(staged, { recursive: true, force: true });
    return storeFailure(error);
  }
}

/** `ordivon restore SRC [--force]` (backup.ts). */
export async function restoreFrom(
  values: { state?: string | undefined; src: string; force: boolean },
  io: Io,
): Promise<number> {
  const root = resolveStateRoot(values.state);
  const src = resolve(values.src);
  if (!existsSync(join(src, 'backup.json')) || !existsSync(join(src, 'lmdb', 'data.mdb'))) {
    throw new CliError('backup_invalid', `${src} is not an ordivon backup (no backup.json or lmdb/data.mdb)`);
  }
  if (!isEmptyDir(root) && !values.force)
    throw new CliError('restore_not_empty', `${root} is not empty; pass --force to replace it`);
  const staged = `${root}.restore-${process.pid}`;
  rmSync(staged, { recursive: true, force: true });
  cpSync(src, staged, { recursive: true, verbatimSymlinks: true, filter: (path) => !path.endsWith('backup.json') });
  // The restored root is private whatever the backup's modes were (one an older build wrote).
  protectStateRoot(staged);
  let release: () => void = () => {};
  try {
    const checked = await check(staged, io, 'restore');
    if (checked.findings.length > 0)
      throw new CliError(checked.findings[0]!.code, `the backup failed its check: ${checked.findings[0]!.message}`);
    if (existsSync(join(root, 'format.json'))) release = acquireLock(root, `ordivon restore pid ${process.pid}`);
    const old = `${root}.replaced-${process.pid}`;
    if (existsSync(root)) renameSync(root, old);
    renameSync(staged, root);
    rmSync(old, { recursive: true, force: true });
    emit(
      io,
      { root, src, tasks: checked.tasks, events: checked.events },
      () => `restored ${checked.tasks} tasks (${checked.events} events) from ${src} into ${root}`,
    );
    return EXIT.ok;
  } catch (error) {
    rmSync(staged, { recursive: true, force: true });
    return storeFailure(error);
  } finally {
    release();
  }
}
