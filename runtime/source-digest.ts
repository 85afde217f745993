import { createHash } from 'node:crypto';
import { readFile, readlink } from 'node:fs/promises';
import { walkTree } from './tree-walk.js';

/** First bytes of the hashed stream; bump when the encoding below changes. */
export const SOURCE_DIGEST_HEADER = 'ordivon-source-digest-v1\n';

export interface SourceDigestOptions {
  /** When given, only paths matching one of these patterns are source. */
  include?: readonly string[] | undefined;
  /** Declared artifacts and other non-source paths. `JUNK_DIRS` are always skipped. */
  exclude?: readonly string[] | undefined;
}

/**
 * sha256 over the source files of `dir`, stable across machines:
 *
 * ```
 * "ordivon-source-digest-v1\n"
 * then, for every entry in byte order of its UTF-8 relative POSIX path:
 *   file:    "F" NUL <path> NUL <byte length, decimal ASCII> NUL <content bytes>
 *   symlink: "L" NUL <path> NUL <target byte length> NUL <link target bytes>   (never followed)
 * ```
 *
 * Directories themselves, file modes and timestamps are not part of the digest. Entries under a
 * `JUNK_DIRS` directory (`.git`, `node_modules`, caches) and paths matching `exclude` are skipped;
 * with `include`, only matching paths count. Returns `sha256:<hex>`. Rejects with the file-system
 * error when `dir` cannot be read.
 */
export async function sourceDigest(dir: string, options: SourceDigestOptions = {}): Promise<string> {
  const { entries } = await walkTree(dir, { include: options.include, exclude: options.exclude });
  const hash = createHash('sha256');
  hash.update(SOURCE_DIGEST_HEADER);
  for (const entry of entries) {
    const body = entry.kind === 'file' ? await readFile(entry.abs) : Buffer.from(await readlink(entry.abs), 'utf8');
    hash.update(entry.kind === 'file' ? 'F\0' : 'L\0');
    hash.update(entry.rel, 'utf8');
    hash.update(`\0${body.length}\0`);
    hash.update(body);
  }
  return 'sha256:' + hash.digest('hex');
}
