import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, readlink } from 'node:fs/promises';
import type { FileChange, FilesEvidence } from './job-record.js';
import { walkTree, type TreeEntry } from './tree-walk.js';

/** Stat-only picture of a workspace taken at dispatch: cheap even for large trees. */
export interface WorkspaceSnapshot {
  entries: Map<string, Pick<TreeEntry, 'kind' | 'size' | 'mtimeNs' | 'ino'>>;
  truncated: boolean;
}

/** Walks `dir` (junk directories skipped) and remembers kind, size, mtime and inode of every entry. */
export async function snapshotWorkspace(dir: string, maxEntries: number): Promise<WorkspaceSnapshot> {
  const { entries, truncated } = await walkTree(dir, { maxEntries });
  return {
    entries: new Map(entries.map((e) => [e.rel, { kind: e.kind, size: e.size, mtimeNs: e.mtimeNs, ino: e.ino }])),
    truncated,
  };
}

async function digestEntry(entry: TreeEntry): Promise<FileChange | undefined> {
  const hash = createHash('sha256');
  if (entry.kind === 'symlink') {
    const target = Buffer.from(await readlink(entry.abs), 'utf8');
    return {
      name: entry.rel,
      kind: 'symlink',
      bytes: target.length,
      digest: 'sha256:' + hash.update(target).digest('hex'),
    };
  }
  // O_NOFOLLOW: a file swapped for a symlink after the walk is not followed out of the workspace.
  const handle = await open(entry.abs, constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => undefined);
  if (handle === undefined) return undefined;
  try {
    let bytes = 0;
    for await (const chunk of handle.createReadStream({ autoClose: false }) as AsyncIterable<Buffer>) {
      hash.update(chunk);
      bytes += chunk.length;
    }
    return { name: entry.rel, kind: 'file', bytes, digest: 'sha256:' + hash.digest('hex') };
  } finally {
    await handle.close();
  }
}

/**
 * Files created or modified since `before` (a different kind, size, mtime or inode), with content
 * digests, plus the names that disappeared. Digests are taken now, after the job ended.
 */
export async function workspaceChanges(
  dir: string,
  before: WorkspaceSnapshot,
  maxEntries: number,
): Promise<FilesEvidence> {
  const after = await walkTree(dir, { maxEntries });
  const changed: FileChange[] = [];
  const seen = new Set<string>();
  for (const entry of after.entries) {
    seen.add(entry.rel);
    const prior = before.entries.get(entry.rel);
    const same =
      prior !== undefined &&
      prior.kind === entry.kind &&
      prior.size === entry.size &&
      prior.mtimeNs === entry.mtimeNs &&
      prior.ino === entry.ino;
    if (same) continue;
    const change = await digestEntry(entry);
    if (change !== undefined) changed.push(change);
  }
  const deleted = after.truncated ? [] : [...before.entries.keys()].filter((rel) => !seen.has(rel));
  return { changed, deleted, truncated: before.truncated || after.truncated };
}
