import { closeSync, fsyncSync, openSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { pidExists } from '../os/identity.js';
import { StoreError } from './errors.js';
import { PRIVATE_FILE_MODE } from './private-root.js';
import { removeStale, safeJson, unlinkQuietly } from './holder-file.js';

const LockFile = z.object({ pid: z.number().int(), host: z.string(), startedAt: z.string(), purpose: z.string() });
export type LockInfo = z.infer<typeof LockFile>;

/**
 * Reads the holder of the state-root lock, or null when the root is free or its holder died.
 * A lock file that cannot be read yet (its creator is between create and write) counts as held
 * for a few seconds, so two starting processes never both take over.
 */
export function lockHolder(root: string): LockInfo | null {
  return judgeLock(join(root, 'state.lock')).holder;
}

/** The lock file's text as read, and its live holder (null when free, stale or gone). */
function judgeLock(path: string): { text: string | undefined; holder: LockInfo | null } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return { text: undefined, holder: null };
  }
  const parsed = LockFile.safeParse(safeJson(text));
  if (!parsed.success) {
    const stat = statSync(path, { throwIfNoEntry: false });
    const stale = !stat || Date.now() - stat.mtimeMs > 5_000;
    return { text, holder: stale ? null : { pid: -1, host: hostname(), startedAt: 'just now', purpose: 'starting' } };
  }
  return { text, holder: parsed.data.host === hostname() && !pidExists(parsed.data.pid) ? null : parsed.data };
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
      const fd = openSync(path, 'wx', PRIVATE_FILE_MODE);
      try {
        writeFileSync(fd, JSON.stringify(mine));
        fsyncSync(fd);
      } catch (error) {
        // A lock without its holder's name would keep others out for a while: never leave one.
        closeSync(fd);
        unlinkQuietly(path);
        throw new StoreError('storage_failed', `cannot write ${path}: ${(error as Error).message}`, { root });
      }
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
      if (error instanceof StoreError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      // A root this process may not write (read-only mount, permissions) is refused with a documented code.
      if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM')
        throw new StoreError('read_only', `state root ${root} is not writable (${code}): ${(error as Error).message}`, {
          root,
        });
      if (code !== 'EEXIST')
        throw new StoreError('storage_failed', `cannot create ${path}: ${(error as Error).message}`, { root });
      const { text, holder } = judgeLock(path);
      if (holder) {
        throw new StoreError(
          'state_locked',
          `state root ${root} is held by pid ${holder.pid} (${holder.purpose}) since ${holder.startedAt}`,
          {
            root,
            holder,
          },
        );
      }
      // The holder is gone (or the file is unreadable): remove that stale lock (only one of several
      // waiters does, and never a lock another waiter took meanwhile) and try again.
      if (text !== undefined) removeStale(path, text);
    }
  }
  throw new StoreError('state_locked', `could not take the lock of ${root}`, { root }, { retryable: true });
}
