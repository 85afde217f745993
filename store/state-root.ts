import { closeSync, existsSync, statSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync, fsyncSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { StoreError } from './errors.js';
import { FORMAT_NAME, FORMAT_VERSION, FormatFile } from './records.js';

/** Resolves the state root: explicit option, then ORDIVON_STATE, then ./.ordivon. */
export function resolveStateRoot(explicit?: string): string {
  return resolve(explicit ?? process.env.ORDIVON_STATE ?? '.ordivon');
}

/**
 * Checks `format.json`, creating it for a new root when `create` is set. A root of another
 * format or version is refused `format_unknown`; a missing root `state_missing`.
 */
export function checkFormat(root: string, create: boolean): void {
  const path = join(root, 'format.json');
  if (!existsSync(path)) {
    if (!create) throw new StoreError('state_missing', `no Ordivon state at ${root}`, { root });
    mkdirSync(root, { recursive: true });
    writeDurably(path, JSON.stringify({ format: FORMAT_NAME, version: FORMAT_VERSION }, null, 2) + '\n');
    return;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new StoreError('format_unknown', `${path} is not JSON: ${(error as Error).message}`, { root, object: path });
  }
  const format = FormatFile.safeParse(parsed);
  if (!format.success || format.data.version !== FORMAT_VERSION) {
    throw new StoreError('format_unknown', `${path} names ${JSON.stringify(parsed)}; this build reads ${FORMAT_NAME} v${FORMAT_VERSION}`, {
      root,
      object: path,
    });
  }
}

function writeDurably(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  const fd = openSync(tmp, 'r');
  fsyncSync(fd);
  closeSync(fd);
  renameSync(tmp, path);
}

const LockFile = z.object({ pid: z.number().int(), host: z.string(), startedAt: z.string(), purpose: z.string() });
export type LockInfo = z.infer<typeof LockFile>;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Reads the holder of the state-root lock, or null when the root is free or its holder died.
 * A lock file that cannot be read yet (its creator is between create and write) counts as held
 * for a few seconds, so two starting processes never both take over.
 */
export function lockHolder(root: string): LockInfo | null {
  const path = join(root, 'state.lock');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  const parsed = LockFile.safeParse(safeJson(text));
  if (!parsed.success) {
    const stat = statSync(path, { throwIfNoEntry: false });
    return !stat || Date.now() - stat.mtimeMs > 5_000 ? null : { pid: -1, host: hostname(), startedAt: 'just now', purpose: 'starting' };
  }
  return parsed.data.host === hostname() && !alive(parsed.data.pid) ? null : parsed.data;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Takes the state-root lock: one supervisor (or one writing CLI command) per state root. The lock
 * is a file created exclusively and naming its holder; a lock whose holder process is gone is
 * taken over. Read-only inspection (`doctor`, `show`) does not take it.
 *
 * Returns the release function. Fails `state_locked` naming the holder.
 */
export function acquireLock(root: string, purpose: string): () => void {
  const path = join(root, 'state.lock');
  const mine: LockInfo = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString(), purpose };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeFileSync(fd, JSON.stringify(mine));
      fsyncSync(fd);
      closeSync(fd);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        try {
          const holder = LockFile.parse(JSON.parse(readFileSync(path, 'utf8')));
          if (holder.pid === mine.pid && holder.startedAt === mine.startedAt) unlinkSync(path);
        } catch {
          /* already gone */
        }
      };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // A root this process may not write (read-only mount, permissions) is refused with a documented code.
      if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM') throw new StoreError('read_only', `state root ${root} is not writable (${code}): ${(error as Error).message}`, { root });
      if (code !== 'EEXIST') throw error;
      const holder = lockHolder(root);
      if (holder) {
        throw new StoreError('state_locked', `state root ${root} is held by pid ${holder.pid} (${holder.purpose}) since ${holder.startedAt}`, {
          root,
          holder,
        });
      }
      // The holder is gone (or the file is unreadable): remove the stale lock and try again.
      try {
        unlinkSync(path);
      } catch {
        /* another process removed it first */
      }
    }
  }
  throw new StoreError('state_locked', `could not take the lock of ${root}`, { root }, true);
}
