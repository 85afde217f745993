import {
  chownSync,
  closeSync,
  constants,
  fchownSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  writeSync,
} from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { RequestError } from '@agentclientprotocol/sdk';
import { JSONRPC_INVALID_PARAMS, JSONRPC_RESOURCE_NOT_FOUND, type AcpRefusalCode } from './errors.js';

/** One refused client-side file access, as recorded in the receipt. */
export interface FsRefusal {
  method: 'fs/read_text_file' | 'fs/write_text_file';
  path: string;
  code: AcpRefusalCode;
}

/** Largest file the client will hand to an agent through `fs/read_text_file`. */
const MAX_READ_BYTES = 8 << 20;

/** Refuses the access being served: a JSON-RPC error whose `data.code` names why, recorded in the receipt. */
type Refuse = (code: AcpRefusalCode, detail: string, jsonRpcCode?: number) => never;

function refuser(refusals: FsRefusal[], method: FsRefusal['method'], path: string): Refuse {
  return (code, detail, jsonRpcCode = JSONRPC_INVALID_PARAMS) => {
    // A missing file is an answer, not a refusal: agents read a file before creating it (an editor's
    // pre-read), so it is not recorded next to escapes and oversize reads.
    if (code !== 'file_missing') refusals.push({ method, path, code });
    throw new RequestError(jsonRpcCode, `${code}: ${detail}`, { code, path });
  };
}

/** The path's components below `root`, lexically (no `..` leaving it); refused `path_escape` otherwise. */
function componentsOf(root: string, path: string, refuse: Refuse): string[] {
  const inside = (rel: string) => rel !== '' && rel !== '..' && !rel.startsWith('..' + sep) && !isAbsolute(rel);
  const real = realpathSync(root);
  // An absolute path may name the workspace by its real path or by the path the agent was given.
  const rel = [relative(real, resolve(real, path)), relative(root, resolve(root, path))].find(inside);
  if (rel === undefined) return refuse('path_escape', `${path} is outside the workspace`);
  return rel.split(sep);
}

/**
 * Opens `names` below `root` one component at a time, each from the descriptor of the folder before
 * it (`/proc/self/fd/<fd>/<name>`, never a path from the root), none followed if it is a symlink:
 * what `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` does, which Node does not expose. Checking
 * a whole path and then opening it by path can be raced: the agent swaps a folder of its workspace
 * for a symlink out between the two, and the Host, which is not sandboxed, writes or reads outside.
 * With `create`, missing folders are made and handed to its `owner`. Returns the descriptor.
 */
function openBeneath(
  root: string,
  names: readonly string[],
  flags: number,
  refuse: Refuse,
  create?: { owner: { uid: number; gid: number } | undefined },
): number {
  let dir = openSync(root, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    for (const name of names.slice(0, -1)) {
      const path = `/proc/self/fd/${dir}/${name}`;
      if (create !== undefined)
        try {
          mkdirSync(path);
          if (create.owner !== undefined) chownSync(path, create.owner.uid, create.owner.gid);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        }
      let next: number;
      try {
        next = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ELOOP' || code === 'ENOTDIR') refuse('symlink_escape', `${name} is a symlink or not a folder`);
        throw error;
      }
      closeSync(dir);
      dir = next;
    }
    return openSync(`/proc/self/fd/${dir}/${names.at(-1)!}`, flags | constants.O_NOFOLLOW, 0o644);
  } finally {
    closeSync(dir);
  }
}

/** Maps a failed open to the refusal it means; anything else is thrown as it is. */
function refuseOpen(error: unknown, path: string, refuse: Refuse): never {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') refuse('file_missing', `${path} does not exist`, JSONRPC_RESOURCE_NOT_FOUND);
  if (code === 'ELOOP') refuse('symlink_escape', `${path} is a symlink`);
  if (code === 'ENXIO' || code === 'EISDIR') refuse('not_a_file', `${path} is not a regular file`);
  throw error;
}

/**
 * Serves `fs/read_text_file` for an agent, confined to the workspace `root`.
 * Fails (as a JSON-RPC error whose `data.code` names the reason, and a recorded refusal) when the
 * path escapes the workspace lexically or through a symlink, is not a file or is too big; a missing
 * file is `-32002` with `data.code` `file_missing`, not recorded.
 */
export async function readWorkspaceText(
  root: string,
  params: { path: string; line?: number | null; limit?: number | null },
  refusals: FsRefusal[],
): Promise<string> {
  const refuse = refuser(refusals, 'fs/read_text_file', params.path);
  const names = componentsOf(root, params.path, refuse);
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO the agent made opens at once (and is refused below) instead of holding a
    // thread until a writer comes.
    fd = openBeneath(root, names, constants.O_RDONLY | constants.O_NONBLOCK, refuse);
  } catch (error) {
    return refuseOpen(error, params.path, refuse);
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) refuse('not_a_file', `${params.path} is not a regular file`);
    if (info.size > MAX_READ_BYTES)
      refuse('file_too_large', `${params.path} is ${info.size} bytes; the limit is ${MAX_READ_BYTES}`);
    const text = readFileSync(fd, 'utf8');
    if (params.line == null && params.limit == null) return text;
    const lines = text.split('\n');
    const start = Math.max(0, (params.line ?? 1) - 1);
    return lines.slice(start, params.limit == null ? undefined : start + params.limit).join('\n');
  } finally {
    closeSync(fd);
  }
}

/**
 * Serves `fs/write_text_file`, confined to the workspace `root`; creates missing parent folders
 * inside it. Refuses (JSON-RPC error with `data.code`, recorded) an escape through `..`, an absolute
 * path outside, a symlink on the way (every component is opened without following one), or a target
 * that is not a regular file. Nothing is written when it refuses. With `owner` (the confined agent's
 * account when the Host runs as root), the file and the folders the write created are handed to it,
 * so the agent can go on editing what it asked the client to write.
 */
export async function writeWorkspaceText(
  root: string,
  params: { path: string; content: string },
  refusals: FsRefusal[],
  owner?: { uid: number; gid: number },
): Promise<void> {
  const refuse = refuser(refusals, 'fs/write_text_file', params.path);
  const names = componentsOf(root, params.path, refuse);
  let fd: number;
  try {
    // Not O_TRUNC: the file is emptied only once it is known to be a regular file.
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_NONBLOCK;
    fd = openBeneath(root, names, flags, refuse, { owner });
  } catch (error) {
    return refuseOpen(error, params.path, refuse);
  }
  try {
    if (!fstatSync(fd).isFile()) refuse('not_a_file', `${params.path} is not a regular file`);
    ftruncateSync(fd, 0);
    writeSync(fd, params.content, 0, 'utf8');
    if (owner !== undefined) fchownSync(fd, owner.uid, owner.gid);
  } finally {
    closeSync(fd);
  }
}
