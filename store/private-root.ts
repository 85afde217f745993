import { chmodSync, closeSync, constants, fchmodSync, fstatSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * What other local accounts may do in a state root: nothing. The root holds every Task's spec,
 * evidence, Contexts and agent output, and `service.json` the service's bearer token, so the
 * root and every directory the Host makes in it are 0700 and every file it writes there 0600,
 * whatever the process's umask (which can only take bits away from these modes, never add any).
 * PostgreSQL keeps its data directory the same way, and refuses one other accounts can enter.
 */

/** Mode of every directory the Host makes in a state root, the root included. */
export const PRIVATE_DIR_MODE = 0o700;
/** Mode of every file the Host writes in a state root (LMDB's files, format.json, the lock, service.json, …). */
export const PRIVATE_FILE_MODE = 0o600;
/** Mode bits that let another account in: group and other. */
export const SHARED_MODE_BITS = 0o077;

/** Opts in to opening a state root other local accounts can enter: `ORDIVON_ALLOW_SHARED_ROOT=1` (the CLI's `--allow-shared-root` sets it). */
export const ALLOW_SHARED_ROOT_ENV = 'ORDIVON_ALLOW_SHARED_ROOT';

/** Whether the environment opts in to shared state roots (`ORDIVON_ALLOW_SHARED_ROOT=1`). */
export function sharedRootAllowedByEnv(): boolean {
  return process.env[ALLOW_SHARED_ROOT_ENV] === '1';
}

/** `0755`: a mode as `ls -l` users and `chmod` read it. */
export function octalMode(mode: number): string {
  return `0${(mode & 0o777).toString(8).padStart(3, '0')}`;
}

/**
 * Creates `path` mode 0700 (its missing parents with the default mode: they are not the Host's),
 * or leaves it as it is when it exists. Throws what mkdir throws (ENOTDIR, EACCES, …).
 */
export function makePrivateDir(path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  try {
    mkdirSync(path, { mode: PRIVATE_DIR_MODE });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return;
  }
  // mkdir's mode passes through the umask, which may only have removed bits: set it exactly.
  chmodSync(path, PRIVATE_DIR_MODE);
}

/**
 * Takes group and other bits off the file or directory at `path`, never following a symlink
 * (unless `follow`: the root itself may be one) and never touching a FIFO, socket or device
 * (opened O_NONBLOCK, then fchmod). Silent when it is absent, another kind of file, or not this
 * process's to change.
 */
export function tighten(path: string, follow = false): void {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | (follow ? 0 : constants.O_NOFOLLOW));
  } catch {
    return;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() && !stat.isDirectory()) return;
    if ((stat.mode & SHARED_MODE_BITS) !== 0) fchmodSync(fd, stat.mode & 0o777 & ~SHARED_MODE_BITS);
  } catch {
    /* not ours to change (EPERM): the root's own mode keeps other accounts out */
  } finally {
    closeSync(fd);
  }
}

/** The directories the Host makes in a state root; their files are the Host's too (workspaces/ holds the Tasks' own trees). */
const HOST_DIRS = ['lmdb', 'runtime', 'journal', 'workspaces'] as const;
const FILE_DIRS = ['.', 'lmdb', 'runtime', 'journal'] as const;

/**
 * Makes an existing state root private: the root and its Host directories (`lmdb/`, `runtime/`,
 * `journal/`, `workspaces/`) lose their group and other bits, and so does every file directly in
 * the root, `lmdb/`, `runtime/` and `journal/`. For roots written before the Host made them
 * private, and for files made by a part that does not set a mode itself (the Runtime's LMDB
 * environment, a backup's LMDB copies); inside `workspaces/` nothing is changed (the Tasks' trees
 * keep their modes, the directory's own mode keeps others out).
 */
export function protectStateRoot(root: string): void {
  tighten(root, true);
  for (const dir of HOST_DIRS) tighten(join(root, dir));
  for (const dir of FILE_DIRS) {
    let names: string[];
    try {
      names = readdirSync(join(root, dir));
    } catch {
      continue;
    }
    for (const name of names) tighten(join(root, dir, name));
  }
}
