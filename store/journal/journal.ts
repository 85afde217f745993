import { dirname } from 'node:path';
import { StoreError } from '../errors.js';
import { nodeJournalFs, type JournalFs } from './fs.js';
import { encodeRecord, recordBytes, scanSegment, type JournalRecord } from './record.js';
import { createSegment, listSegments, writeZeros, type Segment } from './segments.js';

export interface JournalOptions {
  /** The journal's directory (created, and its parent synced, when missing). */
  dir: string;
  /** The file-system calls (default node:fs); a test records them. */
  fs?: JournalFs;
  /** Bytes of a new segment (default 4 MiB); a group larger than that gets a segment of its own size. */
  segmentBytes?: number;
  /**
   * The applied position: the last sequence number the caller has applied durably elsewhere.
   * `open` returns the records after it, and the next record is numbered after both it and the
   * journal's last record.
   */
  after?: number;
}

interface Pending {
  payload: Uint8Array;
  digest: Uint8Array;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** One queued record: its journal position, given at once, and its acknowledgement. */
export interface JournalAppend {
  seq: number;
  /** Resolves once the record's group has been written and its fdatasync returned; rejects `journal_failed` otherwise. */
  synced: Promise<void>;
}

interface Sealed extends Segment {
  lastSeq: number;
}

const DEFAULT_SEGMENT_BYTES = 4 << 20;

/**
 * An append-only journal of our own: preallocated, zero-filled segments; one `write` and one
 * `fdatasync` per group of records; a record is acknowledged only once its group's fdatasync
 * returned. Group commit without timers: the first append to find no write in progress leads
 * (from the next microtask, so that appends made in the same turn join it), writes every record
 * queued by then in one write, syncs, and resolves them in order; appends arriving meanwhile
 * queue for the next group.
 *
 * Fail-stop: a failed write, fdatasync or segment creation fails that group `journal_failed`
 * and every later append too, never retried (after a failed fsync the kernel may have dropped the
 * dirty pages and cleared the error: a retry that succeeds proves nothing). The journal is
 * rebuilt from disk by opening it again.
 */
export class Journal {
  private readonly fs: JournalFs;
  private readonly dir: string;
  private readonly segmentBytes: number;
  private fd: number;
  private tail: Segment;
  private tailBytes: number;
  private offset: number;
  /** The position of the first record not yet written: the next group starts here. */
  private nextSeq: number;
  /** The position the next append is given (past every queued record). */
  private assigned: number;
  private readonly sealed: Sealed[];
  private queue: Pending[] = [];
  private leading = false;
  private idle: Array<() => void> = [];
  private failure: StoreError | undefined;
  private closed = false;

  private constructor(state: {
    fs: JournalFs;
    dir: string;
    segmentBytes: number;
    fd: number;
    tail: Segment;
    tailBytes: number;
    offset: number;
    nextSeq: number;
    sealed: Sealed[];
  }) {
    this.fs = state.fs;
    this.dir = state.dir;
    this.segmentBytes = state.segmentBytes;
    this.fd = state.fd;
    this.tail = state.tail;
    this.tailBytes = state.tailBytes;
    this.offset = state.offset;
    this.nextSeq = state.nextSeq;
    this.assigned = state.nextSeq;
    this.sealed = state.sealed;
  }

  /**
   * Opens the journal and reads it: every valid record after `after`, in order. A torn or zero tail
   * after the last valid record is the journal's end: it is zeroed (and synced) so that no later
   * write can be mistaken for what was there. A bad record followed by a valid record of a later
   * group, a gap between segments, or damage in any segment but the last fails
   * `journal_corrupt`, naming the segment and offset.
   */
  static open(options: JournalOptions): { journal: Journal; records: JournalRecord[] } {
    const fs = options.fs ?? nodeJournalFs;
    const { dir } = options;
    const after = options.after ?? 0;
    const segmentBytes = options.segmentBytes ?? DEFAULT_SEGMENT_BYTES;
    const segments = listSegments(fs, dir, dirname(dir));
    const records: JournalRecord[] = [];
    const sealed: Sealed[] = [];
    let expected = segments[0]?.firstSeq ?? after + 1;
    if (expected > after + 1)
      throw new StoreError(
        'journal_corrupt',
        `the journal ${dir} starts at record ${expected}, but only records up to ${after} are applied`,
        { object: dir },
      );
    let last: { segment: Segment; bytes: number; end: number; clean: boolean } | undefined;
    for (const [index, segment] of segments.entries()) {
      const corrupt = (detail: string) =>
        new StoreError('journal_corrupt', `journal segment ${segment.path}: ${detail}`, { object: segment.path });
      if (segment.firstSeq !== expected)
        throw corrupt(`starts at record ${segment.firstSeq}, the journal before it ends at ${expected - 1}`);
      const bytes = fs.readFile(segment.path);
      const scan = scanSegment(bytes, segment.firstSeq);
      const isLast = index === segments.length - 1;
      if (scan.how.kind === 'corrupt')
        throw corrupt(`bad record at offset ${scan.end}, followed by record ${scan.how.later} of a later write`);
      if (scan.how.kind === 'torn' && !isLast)
        throw corrupt(`bad record at offset ${scan.end} before the segments that follow it`);
      for (const record of scan.records) if (record.seq > after) records.push(record);
      expected = segment.firstSeq + scan.records.length;
      if (isLast) last = { segment, bytes: bytes.length, end: scan.end, clean: scan.how.kind === 'clean' };
      else sealed.push({ ...segment, lastSeq: expected - 1 });
    }
    const nextSeq = Math.max(expected, after + 1);
    let fd: number;
    let tail: Segment;
    let tailBytes: number;
    let offset: number;
    if (last !== undefined && nextSeq === expected) {
      fd = fs.open(last.segment.path, false);
      if (!last.clean) {
        writeZeros(fs, fd, last.end, last.bytes);
        fs.fsync(fd);
      }
      tail = last.segment;
      tailBytes = last.bytes;
      offset = last.end;
    } else {
      // No segment yet, or the caller has applied past the journal's end (its segments were
      // removed): the next records start a segment of their own, so that sequence numbers
      // stay contiguous within each.
      if (last !== undefined) sealed.push({ ...last.segment, lastSeq: expected - 1 });
      const created = createSegment(fs, dir, nextSeq, segmentBytes);
      fd = created.fd;
      tail = created.segment;
      tailBytes = segmentBytes;
      offset = 0;
    }
    const journal = new Journal({ fs, dir, segmentBytes, fd, tail, tailBytes, offset, nextSeq, sealed });
    return { journal, records };
  }

  /**
   * Queues one record and numbers it at once, so that the caller can start what it applies
   * elsewhere in journal order beside the sync; `synced` resolves once its group's fdatasync has
   * returned, and nothing may be acknowledged before that. Throws `journal_failed` when an
   * earlier group could not be written or synced (or the journal is closed); `synced` rejects
   * `journal_failed` when this record's group fails: the record may or may not be on disk, and the
   * next open decides.
   */
  append(payload: Uint8Array, digest: Uint8Array): JournalAppend {
    if (this.failure) throw this.failure;
    if (this.closed) throw new StoreError('journal_failed', `the journal ${this.dir} is closed`);
    const seq = this.assigned++;
    const synced = new Promise<void>((resolve, reject) => {
      this.queue.push({ payload, digest, resolve, reject });
    });
    if (!this.leading) {
      this.leading = true;
      queueMicrotask(() => void this.lead());
    }
    return { seq, synced };
  }

  /** The error that stopped the journal, if one did. */
  get failed(): StoreError | undefined {
    return this.failure;
  }

  /** The last sequence number of the newest sealed segment (none but the tail: undefined). */
  get sealedThrough(): number | undefined {
    return this.sealed.at(-1)?.lastSeq;
  }

  /**
   * Removes the sealed segments whose records are all at or before `appliedThrough`: the caller
   * says so only once those records are durable elsewhere. Synced (the directory) before it returns.
   */
  release(appliedThrough: number): void {
    if (this.closed || this.failure) return;
    try {
      let released = 0;
      while (this.sealed.length > 0 && this.sealed[0]!.lastSeq <= appliedThrough) {
        this.fs.unlink(this.sealed.shift()!.path);
        released++;
      }
      if (released > 0) this.fs.fsyncDir(this.dir);
    } catch (error) {
      this.stop(error);
    }
  }

  /** Waits for the group in progress and the ones queued, then closes the tail segment. */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.leading) await new Promise<void>((resolve) => this.idle.push(resolve));
    this.closed = true;
    this.fs.close(this.fd);
  }

  private async lead(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const group = this.queue;
        this.queue = [];
        if (this.failure) for (const pending of group) pending.reject(this.failure);
        else await this.commit(group);
      }
    } finally {
      this.leading = false;
      for (const resolve of this.idle.splice(0)) resolve();
    }
  }

  private async commit(group: Pending[]): Promise<void> {
    const first = this.nextSeq;
    let size = 0;
    for (const pending of group) size += recordBytes(pending.payload.length);
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const [i, pending] of group.entries())
      at = encodeRecord(bytes, at, { seq: first + i, group: first, digest: pending.digest, payload: pending.payload });
    try {
      if (this.offset + size > this.tailBytes) this.rollover(size);
      // The write only fills the page cache, so it runs here; the flush runs off this thread.
      this.fs.writeSync(this.fd, bytes, this.offset);
      await this.fs.fdatasync(this.fd);
    } catch (error) {
      const failure = this.stop(error);
      for (const pending of group) pending.reject(failure);
      return;
    }
    this.offset += size;
    this.nextSeq += group.length;
    for (const pending of group) pending.resolve();
  }

  private stop(error: unknown): StoreError {
    this.failure ??= new StoreError(
      'journal_failed',
      `the journal ${this.dir} could not be written or synced (${(error as Error).message}); no append is taken until the store is opened again`,
      { object: this.tail.path },
      { cause: error },
    );
    return this.failure;
  }

  /** Seals the tail and starts a new segment at the next record, large enough for `size`. */
  private rollover(size: number): void {
    // An empty tail (too small for this group) is replaced: the new segment is renamed over it.
    const created = createSegment(this.fs, this.dir, this.nextSeq, Math.max(this.segmentBytes, size));
    if (this.offset > 0) this.sealed.push({ ...this.tail, lastSeq: this.nextSeq - 1 });
    this.fs.close(this.fd);
    this.fd = created.fd;
    this.tail = created.segment;
    this.tailBytes = Math.max(this.segmentBytes, size);
    this.offset = 0;
  }
}
