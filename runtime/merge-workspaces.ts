import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, lstat, mkdir, open, readlink, rm, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { RelativePath } from './dispatch-input.js';
import { RuntimeError } from './errors.js';

/** Each source workspace and the paths its runs changed or removed there (their jobs' `files`). */
export const MergeSources = z
  .array(
    z.strictObject({
      workspace: z.string().min(1),
      paths: z.array(RelativePath).max(100_000),
    }),
  )
  .min(1)
  .max(64);
export type MergeSources = z.infer<typeof MergeSources>;

/** A path as one source has it: a file, a symlink, or gone (null). */
type Version = { kind: 'file' | 'symlink'; abs: string; digest: string } | null;

/**
 * Brings the paths each source workspace's runs changed or removed into `target`, the base every
 * source was seeded from (the winners of a branch into their parent's workspace,
 * docs/branch-and-join.md). Two sources that hold one path differently are a conflict: nothing is
 * written, `merge_conflict` naming the paths. Copying a path as its source holds it is
 * idempotent, so a merge interrupted by a crash and made again ends the same. Answers the paths
 * written, sorted.
 */
export async function mergeWorkspaces(target: string, raw: MergeSources): Promise<string[]> {
  const sources = MergeSources.parse(raw);
  const merged = new Map<string, Version>();
  const conflicts = new Set<string>();
  for (const source of sources)
    for (const rel of source.paths) {
      const version = await versionOf(join(source.workspace, rel));
      if (merged.has(rel) && merged.get(rel)?.digest !== version?.digest) conflicts.add(rel);
      merged.set(rel, version);
    }
  if (conflicts.size > 0)
    throw new RuntimeError(
      'merge_conflict',
      `changed differently by more than one source: ${[...conflicts].sort().slice(0, 20).join(', ')}`,
    );
  for (const [rel, version] of merged) {
    const to = join(target, rel);
    await rm(to, { force: true });
    if (version === null) continue;
    await mkdir(dirname(to), { recursive: true });
    if (version.kind === 'symlink') await symlink(await readlink(version.abs), to);
    else await copyFile(version.abs, to);
  }
  return [...merged.keys()].sort();
}

/** The path's kind and content digest; null when it is not there (or is neither a file nor a symlink). */
async function versionOf(abs: string): Promise<Version> {
  const stat = await lstat(abs).catch(() => undefined);
  if (stat?.isSymbolicLink())
    return {
      kind: 'symlink',
      abs,
      digest:
        'L:' +
        createHash('sha256')
          .update(await readlink(abs))
          .digest('hex'),
    };
  if (!stat?.isFile()) return null;
  const hash = createHash('sha256');
  // O_NOFOLLOW: a file swapped for a symlink after the lstat is not followed out of its tree.
  const handle = await open(abs, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    for await (const chunk of handle.createReadStream({ autoClose: false }) as AsyncIterable<Buffer>)
      hash.update(chunk);
  } finally {
    await handle.close();
  }
  return { kind: 'file', abs, digest: 'F:' + hash.digest('hex') };
}
