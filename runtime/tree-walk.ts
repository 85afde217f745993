import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Directory names skipped at any depth: tool caches and VCS data, never source or deliverables. */
export const JUNK_DIRS: readonly string[] = ['.git', 'node_modules', '__pycache__', '.pytest_cache', '.ordivon'];

export interface TreeEntry {
  /** Path relative to the walked root, `/`-separated. */
  rel: string;
  abs: string;
  kind: 'file' | 'symlink';
  size: number;
  mtimeNs: bigint;
  ino: bigint;
}

export interface WalkOptions {
  /** When given, a file counts only if it matches one of these patterns. */
  include?: readonly string[] | undefined;
  exclude?: readonly string[] | undefined;
  /** Stop after this many entries and report `truncated`. */
  maxEntries?: number;
}

type Matcher = (rel: string) => boolean;

/*
 * Not picomatch: these patterns select the files a source digest covers (`sourceInclude`,
 * `sourceExclude` of stored verification jobs), so what a pattern matches is part of stored digests.
 * picomatch gives `?`, `[…]`, `{a,b}` and a leading `!` meanings they do not have here, and a
 * pattern here also matches everything under what it names, which picomatch needs spelled out.
 */

/**
 * Compiles one pattern: a plain relative path matches itself and everything under it; a pattern with
 * `*` is a glob where `*` stays inside one path segment and `**` spans segments.
 */
export function compilePattern(pattern: string): Matcher {
  const p = pattern.replace(/\/+$/, '');
  if (!p.includes('*')) return (rel) => rel === p || rel.startsWith(p + '/');
  let source = '';
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === '*' && p[i + 1] === '*') {
      const slash = p[i + 2] === '/';
      source += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') source += '[^/]*';
    else source += c.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  }
  const re = new RegExp(`^${source}(?:/.*)?$`);
  return (rel) => re.test(rel);
}

function anyOf(patterns: readonly string[] | undefined): Matcher | undefined {
  if (patterns === undefined) return undefined;
  const matchers = patterns.map(compilePattern);
  return (rel) => matchers.some((m) => m(rel));
}

/** Byte order of the UTF-8 form, so every implementation sorts the same way. */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

function ifGone<T>(fallback: T): (error: unknown) => T {
  return (error) => {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return fallback;
    throw error;
  };
}

/**
 * Lists regular files and symlinks under `root` (symlinks are never followed), skipping `JUNK_DIRS`
 * and excluded paths, sorted by `compareUtf8` of the relative path. Other file types are ignored.
 */
export async function walkTree(
  root: string,
  options: WalkOptions = {},
): Promise<{ entries: TreeEntry[]; truncated: boolean }> {
  const include = anyOf(options.include);
  const exclude = anyOf(options.exclude);
  const max = options.maxEntries ?? Number.POSITIVE_INFINITY;
  const entries: TreeEntry[] = [];
  let truncated = false;
  const pending: string[] = [''];
  while (pending.length > 0 && !truncated) {
    const dirRel = pending.pop()!;
    // The root itself must exist; anything below it may vanish while a job runs.
    const names = dirRel === '' ? await readdir(root) : await readdir(join(root, dirRel)).catch(ifGone([]));
    for (const name of names) {
      const rel = dirRel === '' ? name : `${dirRel}/${name}`;
      if (exclude?.(rel)) continue;
      const abs = join(root, rel);
      const stat = await lstat(abs, { bigint: true }).catch(ifGone(undefined));
      if (stat === undefined) continue;
      if (stat.isDirectory()) {
        if (!JUNK_DIRS.includes(name)) pending.push(rel);
        continue;
      }
      const kind = stat.isFile() ? 'file' : stat.isSymbolicLink() ? 'symlink' : undefined;
      if (kind === undefined || (include !== undefined && !include(rel))) continue;
      if (entries.length >= max) {
        truncated = true;
        break;
      }
      entries.push({ rel, abs, kind, size: Number(stat.size), mtimeNs: stat.mtimeNs, ino: stat.ino });
    }
  }
  entries.sort((a, b) => compareUtf8(a.rel, b.rel));
  return { entries, truncated };
}
