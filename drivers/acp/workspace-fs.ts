import { constants } from 'node:fs';
import { mkdir, open, stat } from 'node:fs/promises';
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

function refuse(refusals: FsRefusal[], refusal: FsRefusal, jsonRpcCode: number, detail: string): never {
  // A missing file is an answer, not a refusal: agents read a file before creating it (an editor's
  // pre-read), so it is not recorded next to escapes and oversize reads.
  if (refusal.code !== 'file_missing') refusals.push(refusal);
  throw new RequestError(jsonRpcCode, `${refusal.code}: ${detail}`, { code: refusal.code, path: refusal.path });
}

function confine(root: string, method: FsRefusal['method'], path: string, refusals: FsRefusal[]): string {
  const resolved = resolveInside(root, path);
  if (resolved.ok) return resolved.value;
  const code = resolved.code === 'symlink_escape' ? 'symlink_escape' : 'path_escape';
  return refuse(refusals, { method, path, code }, JSONRPC_INVALID_PARAMS, resolved.detail);
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
  const method = 'fs/read_text_file';
  const target = confine(root, method, params.path, refusals);
  // O_NOFOLLOW: the path was resolved above; a symlink swapped in since is refused, not followed.
  const handle = await open(target, constants.O_RDONLY | constants.O_NOFOLLOW).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT')
      refuse(
        refusals,
        { method, path: params.path, code: 'file_missing' },
        JSONRPC_RESOURCE_NOT_FOUND,
        `${params.path} does not exist`,
      );
    if (error.code === 'ELOOP')
      refuse(
        refusals,
        { method, path: params.path, code: 'symlink_escape' },
        JSONRPC_INVALID_PARAMS,
        `${params.path} is a symlink`,
      );
    throw error;
  });
  try {
    const info = await handle.stat();
    if (!info.isFile())
      refuse(
        refusals,
        { method, path: params.path, code: 'not_a_file' },
        JSONRPC_INVALID_PARAMS,
        `${params.path} is not a regular file`,
      );
    if (info.size > MAX_READ_BYTES)
      refuse(
        refusals,
        { method, path: params.path, code: 'file_too_large' },
        JSONRPC_INVALID_PARAMS,
        `${params.path} is ${info.size} bytes; the limit is ${MAX_READ_BYTES}`,
      );
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
 * when it refuses.
 */
export async function writeWorkspaceText(
  root: string,
  params: { path: string; content: string },
  refusals: FsRefusal[],
): Promise<void> {
  const method = 'fs/write_text_file';
  const target = confine(root, method, params.path, refusals);
  const existing = await stat(target).catch(() => undefined);
  if (existing && !existing.isFile())
    refuse(
      refusals,
      { method, path: params.path, code: 'not_a_file' },
      JSONRPC_INVALID_PARAMS,
      `${params.path} is not a regular file`,
    );
  await mkdir(dirname(target), { recursive: true });
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;
  const handle = await open(target, flags, 0o644).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ELOOP')
      refuse(
        refusals,
        { method, path: params.path, code: 'symlink_escape' },
        JSONRPC_INVALID_PARAMS,
        `${params.path} is a symlink`,
      );
    throw error;
  });
  try {
    await handle.writeFile(params.content, 'utf8');
  } finally {
    await handle.close();
  }
}
