import { readSync } from 'node:fs';

/**
 * LMDB's on-disk layout as lmdb-js 3's LMDB writes it (its fork of mdb.master3,
 * `dependencies/lmdb/libraries/liblmdb/mdb.c`, 64-bit `pgno_t`/`txnid_t`), read with `pread` so
 * that no damaged or missing page is ever touched through the map.
 *
 * A page starts with a 24-byte header `{pgno u64, txnid u64, pad u16, flags u16, lower u16,
 * upper u16}` (an overflow page's `lower`/`upper` are one u32, its page count). The meta (pages 0
 * and 1, after the header) is `{magic u32, version u32, address u64, mapsize u64, dbs[2] of 48
 * bytes, last_pg u64, txnid u64}`, each `MDB_db` `{pad u32 (the page size, in the free database's),
 * flags u16, depth u16, branch u64, leaf u64, overflow u64, entries u64, root u64}`. Nodes are
 * `{lo u16, hi u16, flags u16, ksize u16, key, data}`: a branch node's child page is
 * `lo | hi << 16 | flags << 32`, a leaf node's data size `lo | hi << 16`.
 */
export const PAGE_HEADER = 24;
export const NODE_HEADER = 8;
export const DB_RECORD = 48;
export const MAGIC = 0xbeefc0de;
export const DATA_VERSION = 2;
export const P_BRANCH = 0x01;
export const P_LEAF = 0x02;
export const P_OVERFLOW = 0x04;
export const P_META = 0x08;
export const P_LEAF2 = 0x20;
export const P_SUBP = 0x40;
export const F_BIGDATA = 0x01;
export const F_SUBDATA = 0x02;
export const F_DUPDATA = 0x04;
/** `MDB_DUPSORT` and `MDB_DUPFIXED` in an `MDB_db`'s flags. */
export const DB_DUPSORT = 0x04;
export const DB_DUPFIXED = 0x10;
const INVALID_PAGE = 0xffffffffffffffffn;

/** Offsets inside a meta page (from the page's start). */
export const META = { magic: 24, version: 28, mapsize: 40, free: 48, main: 96, lastPage: 144, txnid: 152 } as const;

/** A u64 field as a number; `P_INVALID` (all ones) is -1. Throws past 2^53. */
export function u64(buffer: Buffer, offset: number): number {
  const value = buffer.readBigUInt64LE(offset);
  if (value === INVALID_PAGE) return -1;
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`value ${value} at ${offset} is out of range`);
  return Number(value);
}

/** An `MDB_db` record: a tree's flags, depth, root page (-1 when empty) and counts. */
export interface DbRecord {
  pad: number;
  flags: number;
  depth: number;
  branchPages: number;
  leafPages: number;
  overflowPages: number;
  entries: number;
  root: number;
}

export function readDbRecord(buffer: Buffer, offset: number): DbRecord {
  return {
    pad: buffer.readUInt32LE(offset),
    flags: buffer.readUInt16LE(offset + 4),
    depth: buffer.readUInt16LE(offset + 6),
    branchPages: u64(buffer, offset + 8),
    leafPages: u64(buffer, offset + 16),
    overflowPages: u64(buffer, offset + 24),
    entries: u64(buffer, offset + 32),
    root: u64(buffer, offset + 40),
  };
}

/** Reads whole pages of an open data file with `pread`. */
export class PageReader {
  constructor(
    private readonly fd: number,
    readonly pageSize: number,
    readonly size: number,
  ) {}

  /** `count` pages from `page`; throws when they are not all in the file. */
  read(page: number, count = 1): Buffer {
    if ((page + count) * this.pageSize > this.size) throw new Error(`page ${page} is past the end of the file`);
    return readBytes(this.fd, page * this.pageSize, count * this.pageSize);
  }
}

/** `length` bytes at `position`; throws when the file ends before them. */
export function readBytes(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buffer, done, length - done, position + done);
    if (n === 0) throw new Error(`the file ends before byte ${position + length}`);
    done += n;
  }
  return buffer;
}

/**
 * Calls `run(first, count)` for each run of pages a free database record (an ID list) names.
 * lmdb-js's ID lists are `[count, entry…]` of 64-bit entries: single pages, 0 for an empty slot,
 * and runs, a negative entry -n followed by the first page of n consecutive pages (midl.c,
 * `mdb_midl_print`). Throws when the list does not fit its record.
 */
export function forEachFreeRun(data: Buffer, run: (first: number, count: number) => void): void {
  if (data.length < 8) throw new Error('a free list record is shorter than its count');
  const count = u64(data, 0);
  if (count < 0 || (count + 1) * 8 > data.length) throw new Error('a free list is longer than its record');
  for (let i = 1; i <= count; i++) {
    const entry = data.readBigInt64LE(i * 8);
    if (entry === 0n) continue;
    if (entry > 0n) {
      run(Number(entry), 1);
      continue;
    }
    if (i === count) throw new Error('a free list run has no first page');
    run(u64(data, ++i * 8), Number(-entry));
  }
}
