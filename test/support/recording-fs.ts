import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { nodeJournalFs, type JournalFs } from '../../store/journal/index.js';

/**
 * One call the journal made on the file system, as a crash-consistency test replays it (in the
 * manner of ALICE and CrashMonkey): `sync` and `dirsync` are the boundaries a power cut is
 * placed at; `ack` is the test's own mark that an append was acknowledged then.
 */
export type FsOp =
  | { op: 'create'; path: string }
  | { op: 'write'; path: string; position: number; bytes: Uint8Array }
  | { op: 'sync'; path: string }
  | { op: 'dirsync'; path: string }
  | { op: 'rename'; from: string; to: string }
  | { op: 'unlink'; path: string }
  | { op: 'ack'; id: string };

/** A JournalFs on node:fs that records every call that changes the disk, in order, once it returned. */
export function recordingFs(trace: FsOp[], base: JournalFs = nodeJournalFs): JournalFs {
  const paths = new Map<number, string>();
  const pathOf = (fd: number) => paths.get(fd)!;
  return {
    ...base,
    open(path, create) {
      const fd = base.open(path, create);
      paths.set(fd, path);
      if (create) trace.push({ op: 'create', path });
      return fd;
    },
    close(fd) {
      base.close(fd);
      paths.delete(fd);
    },
    writeSync(fd, bytes, position) {
      base.writeSync(fd, bytes, position);
      trace.push({ op: 'write', path: pathOf(fd), position, bytes: Uint8Array.from(bytes) });
    },
    async fdatasync(fd) {
      await base.fdatasync(fd);
      trace.push({ op: 'sync', path: pathOf(fd) });
    },
    fsync(fd) {
      base.fsync(fd);
      trace.push({ op: 'sync', path: pathOf(fd) });
    },
    fsyncDir(path) {
      base.fsyncDir(path);
      trace.push({ op: 'dirsync', path });
    },
    rename(from, to) {
      base.rename(from, to);
      for (const [fd, path] of paths) if (path === from) paths.set(fd, to);
      trace.push({ op: 'rename', from, to });
    },
    unlink(path) {
      base.unlink(path);
      trace.push({ op: 'unlink', path });
    },
  };
}

/** What becomes of the writes not yet synced when the power goes. */
export type Unsynced =
  /** all lost, and every name change not followed by its directory's sync */
  | 'none'
  /** all reached the disk, names too */
  | 'all'
  /** all but the last write */
  | 'drop-last'
  /** all, the last write only its first half */
  | 'tear-head'
  /** all, the last write only its second half (its sectors reached the disk out of order) */
  | 'tear-tail';

export const UNSYNCED: readonly Unsynced[] = ['none', 'all', 'drop-last', 'tear-head', 'tear-tail'];

interface FileModel {
  durable: Uint8Array;
  pending: Array<{ position: number; bytes: Uint8Array }>;
}

function applyWrite(content: Uint8Array, position: number, bytes: Uint8Array): Uint8Array {
  const size = Math.max(content.length, position + bytes.length);
  const out = new Uint8Array(size);
  out.set(content);
  out.set(bytes, position);
  return out;
}

/**
 * Writes under `into` the files of `root` (by their paths under it) as the disk would hold them
 * after a power cut following the first `upTo` calls of `trace`: a file's bytes as of its last
 * sync plus, per `unsynced`, the writes after it; a name as of its directory's last sync (or every
 * name, for `all`). Returns the ids acknowledged before the cut.
 */
export function crashState(
  trace: readonly FsOp[],
  upTo: number,
  unsynced: Unsynced,
  root: string,
  into: string,
): Set<string> {
  let inode = 0;
  const files = new Map<number, FileModel>();
  const current = new Map<string, number>();
  const durableNames = new Map<string, number>();
  const acked = new Set<string>();
  let lastWrite: { inode: number; index: number } | undefined;
  for (const entry of trace.slice(0, upTo)) {
    switch (entry.op) {
      case 'create':
        files.set(++inode, { durable: new Uint8Array(0), pending: [] });
        current.set(entry.path, inode);
        break;
      case 'write': {
        const id = current.get(entry.path)!;
        const file = files.get(id)!;
        file.pending.push({ position: entry.position, bytes: entry.bytes });
        lastWrite = { inode: id, index: file.pending.length - 1 };
        break;
      }
      case 'sync': {
        const file = files.get(current.get(entry.path)!)!;
        for (const w of file.pending) file.durable = applyWrite(file.durable, w.position, w.bytes);
        file.pending = [];
        break;
      }
      case 'dirsync':
        for (const name of [...durableNames.keys()]) if (dirname(name) === entry.path) durableNames.delete(name);
        for (const [name, id] of current) if (dirname(name) === entry.path) durableNames.set(name, id);
        break;
      case 'rename':
        current.set(entry.to, current.get(entry.from)!);
        current.delete(entry.from);
        break;
      case 'unlink':
        current.delete(entry.path);
        break;
      case 'ack':
        acked.add(entry.id);
        break;
    }
  }
  const names = unsynced === 'all' || unsynced === 'drop-last' || unsynced.startsWith('tear') ? current : durableNames;
  for (const [name, id] of names) {
    const file = files.get(id)!;
    let content = file.durable;
    if (unsynced !== 'none')
      file.pending.forEach((w, index) => {
        const last = lastWrite !== undefined && lastWrite.inode === id && lastWrite.index === index;
        if (!last || unsynced === 'all') content = applyWrite(content, w.position, w.bytes);
        else if (unsynced === 'tear-head')
          content = applyWrite(content, w.position, w.bytes.subarray(0, w.bytes.length >> 1));
        else if (unsynced === 'tear-tail') {
          const half = w.bytes.length >> 1;
          content = applyWrite(content, w.position + half, w.bytes.subarray(half));
        }
      });
    const path = join(into, relative(root, name));
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  }
  return acked;
}

/**
 * The indexes of `trace` a power cut is placed after: the start, every sync and directory sync
 * (the sync boundaries), every write (the moment before the sync that would cover it, when it is
 * the unsynced write `Unsynced` drops or tears) and every acknowledgement (a cut right after one
 * is where acknowledging before the sync loses it).
 */
export function syncBoundaries(trace: readonly FsOp[], from = 0): number[] {
  const cuts = [from];
  for (let i = from; i < trace.length; i++)
    if (['sync', 'dirsync', 'write', 'ack'].includes(trace[i]!.op)) cuts.push(i + 1);
  return cuts;
}
