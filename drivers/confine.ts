import { createHash } from 'node:crypto';
import { lstatSync, openSync, readSync, closeSync, fstatSync, realpathSync, constants } from 'node:fs';
import { isAbsolute, join, normalize, relative, sep } from 'node:path';

/** Refusal codes for workspace access; each is documented in the error table (docs/errors.md). */
export type ConfineCode = 'path_escape' | 'symlink_escape' | 'artifact_missing' | 'artifact_too_large' | 'not_a_file';

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

/** Reads one artifact from inside the workspace, refusing escapes, non-files and files over `maxBytes`. */
export function readArtifact(root: string, name: string, maxBytes: number): ConfineResult<ReadArtifact> {
  const resolved = resolveInside(root, name);
  if (!resolved.ok) return resolved;
  let fd: number;
  try {
    // O_NOFOLLOW: the final component was resolved above; refuse a symlink swapped in since.
    fd = openSync(resolved.value, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { ok: false, code: 'artifact_missing', detail: `${name} does not exist` };
    if (code === 'ELOOP') return { ok: false, code: 'symlink_escape', detail: `${name} is a symlink` };
    throw error;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { ok: false, code: 'not_a_file', detail: `${name} is not a regular file` };
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
