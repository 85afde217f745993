import * as fs from 'node:fs';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../private-root.js';

/**
 * The file-system calls the journal makes, and nothing else: injectable so that a test can record
 * every write and sync (test/store/journal-crash.test.ts rebuilds the disk as a power cut at each
 * sync would leave it). Positions are absolute (pwrite); nothing relies on a file offset.
 *
 * Only a group's fdatasync is asynchronous (run on libuv's pool, so the event loop keeps serving
 * while the device flushes); its write, which only fills the page cache, and the rest (at open, at
 * a segment's creation and when segments are released) are synchronous.
 */
export interface JournalFs {
  mkdir(path: string): void;
  /** Names in a directory (not recursive). */
  readdir(path: string): string[];
  /** A whole file's bytes. */
  readFile(path: string): Uint8Array;
  /** Opens for reading and writing; `create` fails when the file exists (O_EXCL). */
  open(path: string, create: boolean): number;
  close(fd: number): void;
  writeSync(fd: number, bytes: Uint8Array, position: number): void;
  fdatasync(fd: number): Promise<void>;
  fsync(fd: number): void;
  /** fsync of a directory: makes the creations, renames and removals of names in it durable. */
  fsyncDir(path: string): void;
  rename(from: string, to: string): void;
  unlink(path: string): void;
}

function writeAllSync(fd: number, bytes: Uint8Array, position: number): void {
  let done = 0;
  while (done < bytes.length) done += fs.writeSync(fd, bytes, done, bytes.length - done, position + done);
}

/** The journal's calls on node:fs. */
export const nodeJournalFs: JournalFs = {
  // The journal lives in a state root: private like the rest of it (store/private-root.ts).
  mkdir: (path) => void fs.mkdirSync(path, { recursive: true, mode: PRIVATE_DIR_MODE }),
  readdir: (path) => fs.readdirSync(path),
  readFile: (path) => fs.readFileSync(path),
  open: (path, create) => fs.openSync(path, create ? 'wx+' : 'r+', PRIVATE_FILE_MODE),
  close: (fd) => fs.closeSync(fd),
  writeSync: writeAllSync,
  fdatasync: (fd) => new Promise((resolve, reject) => fs.fdatasync(fd, (error) => (error ? reject(error) : resolve()))),
  fsync: (fd) => fs.fsyncSync(fd),
  fsyncDir: (path) => {
    const fd = fs.openSync(path, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  },
  rename: (from, to) => fs.renameSync(from, to),
  unlink: (path) => fs.unlinkSync(path),
};
