import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fchmodSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { basename, dirname, isAbsolute, join, normalize, relative, sep } from 'node:path';
import { resolveInside } from '../../confine.js';
import { refused, type ToolOutcome } from './outcome.js';

/** The largest file read_file, edit_file and search read. */
export const MAX_FILE_BYTES = 8 << 20;

/** A workspace path a tool may use: where it is, and how the model names it. */
export interface Located {
  /** Absolute, with every symlink of its existing prefix resolved. */
  absolute: string;
  /** Relative to the workspace ('.' for the workspace itself), for what the model is told. */
  shown: string;
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Resolves `path` inside the workspace (`resolveInside`), or the refusal the model is told. For a
 * write, the final component must be no symlink (`symlink_refused`: the write would land wherever
 * it points) and no part of the workspace's `.git` (`path_refused`: the Host reads the git state
 * as the run left it, so only git itself, through run_command, changes it).
 */
export function locate(workspace: string, path: string, access: 'read' | 'write'): Located | ToolOutcome {
  const lexical = normalize(isAbsolute(path) ? path : join(workspace, path));
  let resolved: ReturnType<typeof resolveInside>;
  try {
    resolved = resolveInside(workspace, path);
  } catch (error) {
    // resolveInside throws where an existing symlink leads to nothing (realpath fails).
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    if (access === 'write')
      return refused('symlink_refused', `${path} is a symlink that leads nowhere; write to a real path`);
    return refused('file_missing', `${path}: a symlink on the way leads nowhere`);
  }
  if (!resolved.ok) return refused(resolved.code, resolved.detail);
  const shown = relative(realpathSync(workspace), resolved.value) || '.';
  if (access === 'write') {
    if (shown === '.git' || shown.startsWith('.git' + sep))
      return refused(
        'path_refused',
        `${path} is inside .git, which the tools do not write; use git through run_command`,
      );
    if (lstatOrUndefined(lexical)?.isSymbolicLink())
      return refused('symlink_refused', `${path} is a symlink; write to the path it points to instead`);
  }
  return { absolute: resolved.value, shown };
}

export function isRefusal(value: Located | ToolOutcome): value is ToolOutcome {
  return 'ok' in value;
}

/** True when `bytes` look binary: a NUL in their first 8000 bytes (git's own test). */
export function looksBinary(bytes: Buffer): boolean {
  return bytes.subarray(0, 8000).includes(0);
}

/** A regular file's bytes, at most MAX_FILE_BYTES, or the refusal the model is told. */
export function readWhole(located: Located): Buffer | ToolOutcome {
  let stat: Stats;
  try {
    stat = statSync(located.absolute);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      return refused('file_missing', `${located.shown} does not exist`);
    throw error;
  }
  // Checked before reading: reading a FIFO would wait for a writer, a device may act on the read.
  if (!stat.isFile()) return refused('not_a_file', `${located.shown} is not a regular file`);
  if (stat.size > MAX_FILE_BYTES)
    return refused('file_too_large', `${located.shown} is ${stat.size} bytes; the limit is ${MAX_FILE_BYTES}`);
  return readFileSync(located.absolute);
}

/**
 * Replaces (or creates) the file at `located` with `content`: written to a temp file in the same
 * folder, flushed, then renamed over it, so a crash at any point leaves the old file or the new
 * one, never half of one. Missing parent folders are made. A replaced file keeps its mode. Returns
 * whether the file was created.
 */
export function writeAtomically(located: Located, content: string): boolean {
  const folder = dirname(located.absolute);
  mkdirSync(folder, { recursive: true });
  const existing = lstatOrUndefined(located.absolute);
  const temp = join(folder, `.${basename(located.absolute)}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(temp, 'wx', 0o666);
  try {
    try {
      if (existing !== undefined) fchmodSync(fd, existing.mode & 0o7777);
      const bytes = Buffer.from(content, 'utf8');
      let written = 0;
      while (written < bytes.length) written += writeSync(fd, bytes, written);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, located.absolute);
  } catch (error) {
    try {
      unlinkSync(temp);
    } catch {
      // already renamed, or never made
    }
    throw error;
  }
  return existing === undefined;
}
