import { createHash } from 'node:crypto';
import { lstatSync, openSync, readSync, closeSync, fstatSync, realpathSync, constants, type Stats } from 'node:fs';
import { isAbsolute, join, normalize, relative, sep } from 'node:path';

/** Refusal codes for workspace access; each is documented in the error table (docs/errors.md). */
export type ConfineCode =
  | 'path_escape'
  | 'symlink_escape'
  | 'artifact_missing'
  | 'artifact_too_large'
  | 'not_a_file'
  | 'artifact_hardlink'
  | 'artifact_changed';

/**
 * The largest frozen acceptance test, in bytes. The Host pins a test's digest at Task creation
 * (`pinFrozenTests`), the Runtime digests it around the acceptance command and the Host rechecks it
 * afterwards, all with this one bound: a test that could be pinned is one every verification can
 * read, and a larger one is refused when the Task is created (`invalid_spec`), not at each verification.
 */
export const FROZEN_TEST_MAX_BYTES = 4 << 20;

export type ConfineResult<T> = { ok: true; value: T } | { ok: false; code: ConfineCode; detail: string };

function inside(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return rel === '' || (!rel.startsWith('..' + sep) && rel !== '..' && !isAbsolute(rel));
}

/**
 * Resolves a workspace-relative (or absolute) path and proves it stays inside `root`, following
 * symlinks of every existing prefix. A path that does not exist yet (a file about to be written)
 * is checked through its nearest existing parent.
 */
export function resolveInside(root: string, path: string): ConfineResult<string> {
  const realRoot = realpathSync(root);
  const lexical = normalize(isAbsolute(path) ? path : join(realRoot, path));
  if (!inside(realRoot, lexical) && !inside(root, lexical)) {
    return { ok: false, code: 'path_escape', detail: `${path} is outside the workspace` };
  }
  const absolute = inside(realRoot, lexical) ? lexical : join(realRoot, relative(root, lexical));
  // Walk up to the nearest existing ancestor and resolve symlinks there.
  let probe = absolute;
  let rest = '';
  for (;;) {
    try {
      lstatSync(probe);
      break;
    } catch {
      const parent = join(probe, '..');
      if (parent === probe) break;
      rest = rest ? join(probe.slice(parent.length + 1), rest) : probe.slice(parent.length + 1);
      probe = parent;
    }
  }
  const real = realpathSync(probe);
  if (!inside(realRoot, real)) {
    return { ok: false, code: 'symlink_escape', detail: `${path} leads outside the workspace through a symlink` };
  }
  return { ok: true, value: rest ? join(real, rest) : real };
}

export interface ReadArtifact {
  name: string;
  bytes: Buffer;
  digest: string;
}

/** What a file that is not a regular one is, for a `not_a_file` detail. */
function kindOf(stat: Stats): string {
  if (stat.isDirectory()) return 'a directory';
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isSocket()) return 'a socket';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  return 'of an unknown kind';
}

/**
 * Reads one artifact from inside the workspace: a regular file with one name, at most `maxBytes`.
 * Refuses a path or symlink leading out (`path_escape`, `symlink_escape`), a directory, FIFO,
 * socket or device (`not_a_file`, the detail naming the kind), a file with more than one hard link
 * (`artifact_hardlink`), a file over the limit (`artifact_too_large`), and a name whose file was
 * replaced between the check and the open (`artifact_changed`); `artifact_missing` when there is
 * none. Never opens a FIFO or device on purpose, and never waits on one, so no workspace entry can
 * hang the caller. Throws only on an unexpected I/O error (the callers record `artifact_unreadable`).
 */
export function readArtifact(root: string, name: string, maxBytes: number): ConfineResult<ReadArtifact> {
  const resolved = resolveInside(root, name);
  if (!resolved.ok) return resolved;
  let checked: Stats;
  try {
    checked = lstatSync(resolved.value);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return { ok: false, code: 'artifact_missing', detail: `${name} does not exist` };
    }
    throw error;
  }
  // Checked before the open: opening a FIFO waits for a writer, opening a device may act on it.
  if (checked.isSymbolicLink()) return { ok: false, code: 'symlink_escape', detail: `${name} is a symlink` };
  if (!checked.isFile()) {
    return { ok: false, code: 'not_a_file', detail: `${name} is ${kindOf(checked)}, not a regular file` };
  }
  let fd: number;
  try {
    // O_NOFOLLOW: the final component was resolved above; refuse a symlink swapped in since.
    // O_NONBLOCK: a FIFO swapped in since the lstat opens at once instead of waiting for a writer.
    fd = openSync(resolved.value, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { ok: false, code: 'artifact_missing', detail: `${name} does not exist` };
    if (code === 'ELOOP') return { ok: false, code: 'symlink_escape', detail: `${name} is a symlink` };
    // ENXIO: a socket (or a device without a driver) swapped in since the lstat.
    if (code === 'ENXIO')
      return { ok: false, code: 'not_a_file', detail: `${name} is a socket or a device, not a regular file` };
    throw error;
  }
  try {
    const stat = fstatSync(fd);
    // The same inode as the one checked, so also the same kind: a regular file.
    if (stat.dev !== checked.dev || stat.ino !== checked.ino) {
      return { ok: false, code: 'artifact_changed', detail: `${name} was replaced while the Host read it` };
    }
    // Another name can lead from outside the workspace, or outlive the run and change the bytes
    // after the Host digested them; nlink is read from the open file, after any link made since the lstat.
    if (stat.nlink > 1) {
      return {
        ok: false,
        code: 'artifact_hardlink',
        detail: `${name} has ${stat.nlink} hard links; an artifact must have one name`,
      };
    }
    if (stat.size > maxBytes) {
      return {
        ok: false,
        code: 'artifact_too_large',
        detail: `${name} is ${stat.size} bytes; the limit is ${maxBytes}`,
      };
    }
    const bytes = Buffer.alloc(stat.size);
    let offset = 0;
    while (offset < stat.size) {
      const n = readSync(fd, bytes, offset, stat.size - offset, offset);
      if (n === 0) break;
      offset += n;
    }
    const digest = 'sha256:' + createHash('sha256').update(bytes.subarray(0, offset)).digest('hex');
    return { ok: true, value: { name, bytes: bytes.subarray(0, offset), digest } };
  } finally {
    closeSync(fd);
  }
}
