import { constants } from 'node:fs';
import { chown, mkdir, open, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { RequestError } from '@agentclientprotocol/sdk';
import { resolveInside } from '../confine.js';
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

function confine(root: string, path: string, refuse: Refuse): string {
  const resolved = resolveInside(root, path);
  if (resolved.ok) return resolved.value;
  return refuse(resolved.code === 'symlink_escape' ? 'symlink_escape' : 'path_escape', resolved.detail);
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
  const target = confine(root, params.path, refuse);
  // O_NOFOLLOW: the path was resolved above; a symlink swapped in since is refused, not followed.
  // O_NONBLOCK: a FIFO the agent made opens at once (and is refused below) instead of holding a
  // thread of the pool until a writer comes.
  const flags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
  const handle = await open(target, flags).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') refuse('file_missing', `${params.path} does not exist`, JSONRPC_RESOURCE_NOT_FOUND);
    if (error.code === 'ELOOP') refuse('symlink_escape', `${params.path} is a symlink`);
    if (error.code === 'ENXIO') refuse('not_a_file', `${params.path} is a socket, not a regular file`);
    throw error;
  });
  try {
    const info = await handle.stat();
    if (!info.isFile()) refuse('not_a_file', `${params.path} is not a regular file`);
    if (info.size > MAX_READ_BYTES)
      refuse('file_too_large', `${params.path} is ${info.size} bytes; the limit is ${MAX_READ_BYTES}`);
    const text = await handle.readFile('utf8');
    if (params.line == null && params.limit == null) return text;
    const lines = text.split('\n');
    const start = Math.max(0, (params.line ?? 1) - 1);
    return lines.slice(start, params.limit == null ? undefined : start + params.limit).join('\n');
  } finally {
    await handle.close();
  }
}

/**
 * Serves `fs/write_text_file`, confined to the workspace `root`; creates missing parent folders
 * inside it. Refuses (JSON-RPC error with `data.code`, recorded) an escape through `..`, an absolute
 * path outside, a symlink leading out, or a target that is not a regular file. Nothing is written
 * when it refuses. With `owner` (the confined agent's account when the Host runs as root), the file
 * and the folders the write created are handed to it, so the agent can go on editing what it asked
 * the client to write.
 */
export async function writeWorkspaceText(
  root: string,
  params: { path: string; content: string },
  refusals: FsRefusal[],
  owner?: { uid: number; gid: number },
): Promise<void> {
  const refuse = refuser(refusals, 'fs/write_text_file', params.path);
  const target = confine(root, params.path, refuse);
  const existing = await stat(target).catch(() => undefined);
  if (existing && !existing.isFile()) refuse('not_a_file', `${params.path} is not a regular file`);
  const created = await mkdir(dirname(target), { recursive: true });
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;
  const handle = await open(target, flags, 0o644).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ELOOP') refuse('symlink_escape', `${params.path} is a symlink`);
    throw error;
  });
  try {
    await handle.writeFile(params.content, 'utf8');
    if (owner !== undefined) await handle.chown(owner.uid, owner.gid);
  } finally {
    await handle.close();
  }
  if (owner !== undefined && created !== undefined)
    for (let dir = dirname(target); dir.length >= created.length; dir = dirname(dir))
      await chown(dir, owner.uid, owner.gid);
}
