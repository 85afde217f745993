import { join } from 'node:path';
import type { JournalFs } from './fs.js';

/** One segment file: `<first seq, 16 digits>.seg`, the first record it holds (or will hold). */
export interface Segment {
  path: string;
  firstSeq: number;
}

const SEGMENT = /^(\d{16})\.seg$/;
const TEMPORARY = /^\d{16}\.seg\.tmp$/;

export const segmentName = (firstSeq: number) => `${String(firstSeq).padStart(16, '0')}.seg`;

/**
 * The segments under `dir`, in sequence order, after removing what an interrupted creation left
 * (a `.tmp` file is renamed into place only once zero-filled and synced). Creates `dir` (and
 * syncs its parent) when it is missing.
 */
export function listSegments(fs: JournalFs, dir: string, parent: string): Segment[] {
  let names: string[];
  try {
    names = fs.readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    fs.mkdir(dir);
    fs.fsyncDir(parent);
    return [];
  }
  const leftovers = names.filter((name) => TEMPORARY.test(name));
  for (const name of leftovers) fs.unlink(join(dir, name));
  if (leftovers.length > 0) fs.fsyncDir(dir);
  return names
    .flatMap((name) => {
      const match = SEGMENT.exec(name);
      return match ? [{ path: join(dir, name), firstSeq: Number(match[1]) }] : [];
    })
    .sort((a, b) => a.firstSeq - b.firstSeq);
}

const ZEROS = new Uint8Array(1 << 20);

/** Writes zeros over `[from, to)` of an open file (not synced). */
export function writeZeros(fs: JournalFs, fd: number, from: number, to: number): void {
  for (let at = from; at < to; at += ZEROS.length)
    fs.writeSync(fd, ZEROS.subarray(0, Math.min(ZEROS.length, to - at)), at);
}

/**
 * Creates a segment of `bytes` zeros for records from `firstSeq` on, and returns its open
 * descriptor. Zero-filled and fsynced before it is renamed into place and the directory synced:
 * every block is allocated, so a later fdatasync of a record has no file size or extent to write
 * with it, and no crash can leave a half-created segment under a segment's name.
 */
export function createSegment(
  fs: JournalFs,
  dir: string,
  firstSeq: number,
  bytes: number,
): { segment: Segment; fd: number } {
  const path = join(dir, segmentName(firstSeq));
  const temporary = `${path}.tmp`;
  const fd = fs.open(temporary, true);
  try {
    writeZeros(fs, fd, 0, bytes);
    fs.fsync(fd);
    fs.rename(temporary, path);
    fs.fsyncDir(dir);
  } catch (error) {
    fs.close(fd);
    throw error;
  }
  return { segment: { path, firstSeq }, fd };
}
