import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/**
 * Whether an LMDB data file holds every page its last commit can reach, read with `pread` (never
 * through the map, so a short file cannot raise SIGBUS here).
 *
 * LMDB's `mm_last_pg` (`mdb_env_info().me_last_pgno`) is the last page *allocated*, not the last
 * page written: pages a large write transaction allocated at the end of the file and freed again
 * before its commit ("loose" pages) are listed in the free database but never written, so the
 * file may end before them. mdb.c says so at `mm_last_pg`: "Actually the file may be shorter if
 * the freeDB lists the final pages", and "each non-metapage up to mm_last_pg is reachable exactly
 * once: either used by a database or listed in a freeDB record". So a file is whole exactly when
 * every page between its end and `mm_last_pg` is listed in the free database of the meta page
 * LMDB opened. Only that case reads the free database (it is small); a file that reaches
 * `mm_last_pg` costs one `fstat`.
 *
 * Layout read here (lmdb-js 3's LMDB, 64-bit `pgno_t`/`txnid_t`): a 24-byte page header
 * `{pgno u64, txnid u64, pad u16, flags u16, lower u16, upper u16}`; the meta (in pages 0 and 1,
 * after the header) `{magic u32, version u32, address u64, mapsize u64, dbs[2] of 48 bytes
 * {pad u32, flags u16, depth u16, branch u64, leaf u64, overflow u64, entries u64, root u64},
 * last_pg u64, txnid u64}`; nodes `{lo u16, hi u16, flags u16, ksize u16, key, data}`; a free
 * database record is an ID list `[count, entry…]` of 64-bit entries (see `addList`), on overflow
 * pages when large.
 */

const PAGE_HEADER = 24;
const MAGIC = 0xbeefc0de;
const P_BRANCH = 0x01;
const P_LEAF = 0x02;
const F_BIGDATA = 0x01;
const INVALID_PAGE = 0xffffffffffffffffn;

export interface TailCheck {
  /** True when every page up to the last allocated one is in the file or free. */
  whole: boolean;
  /** File size and the end of the last allocated page, in bytes. */
  size: number;
  lastPageEnd: number;
  /** Pages past the end of the file that the free database does not list (reachable data lost). */
  missingPages: number;
  /** Why the free database could not be read, when it could not (the file then counts as not whole). */
  problem?: string;
}

/** Checks `dataFile` against the meta page of transaction `txnId` (LMDB's `lastTxnId`) with `lastPage` (`lastPageNumber`). */
export function checkDataFileTail(dataFile: string, pageSize: number, lastPage: number, txnId: number): TailCheck {
  const fd = openSync(dataFile, 'r');
  try {
    const size = fstatSync(fd).size;
    const lastPageEnd = (lastPage + 1) * pageSize;
    if (size >= lastPageEnd) return { whole: true, size, lastPageEnd, missingPages: 0 };
    const firstMissing = Math.floor(size / pageSize);
    const reader = new PageReader(fd, pageSize, size);
    let free: Set<number>;
    try {
      free = freePagesFrom(reader, lastPage, txnId, firstMissing);
    } catch (error) {
      return {
        whole: false,
        size,
        lastPageEnd,
        missingPages: lastPage + 1 - firstMissing,
        problem: (error as Error).message,
      };
    }
    let missingPages = 0;
    for (let page = firstMissing; page <= lastPage; page++) if (!free.has(page)) missingPages++;
    return { whole: missingPages === 0, size, lastPageEnd, missingPages };
  } finally {
    closeSync(fd);
  }
}

class PageReader {
  constructor(
    private readonly fd: number,
    readonly pageSize: number,
    private readonly size: number,
  ) {}

  /** `count` pages from `page`; throws when they are not all in the file. */
  read(page: number, count = 1): Buffer {
    const length = count * this.pageSize;
    if ((page + count) * this.pageSize > this.size) throw new Error(`page ${page} is past the end of the file`);
    const buffer = Buffer.alloc(length);
    let done = 0;
    while (done < length) {
      const n = readSync(this.fd, buffer, done, length - done, page * this.pageSize + done);
      if (n === 0) throw new Error(`page ${page} cannot be read`);
      done += n;
    }
    return buffer;
  }
}

function u64(buffer: Buffer, offset: number): number {
  const value = buffer.readBigUInt64LE(offset);
  if (value === INVALID_PAGE) return -1;
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`value ${value} at ${offset} is out of range`);
  return Number(value);
}

/** Free page numbers ≥ `from` listed by the free database of the meta page of `txnId`. */
function freePagesFrom(reader: PageReader, lastPage: number, txnId: number, from: number): Set<number> {
  let root: number | undefined;
  for (const metaPage of [0, 1]) {
    const page = reader.read(metaPage);
    const meta = PAGE_HEADER;
    if (page.readUInt32LE(meta) !== MAGIC) continue;
    if (u64(page, meta + 128) === txnId && u64(page, meta + 120) === lastPage) root = u64(page, meta + 24 + 40);
  }
  if (root === undefined) throw new Error(`no meta page names transaction ${txnId} and last page ${lastPage}`);
  const free = new Set<number>();
  if (root === -1) return free; // empty free database
  // lmdb-js's ID lists hold single pages, 0 for an empty slot, and runs: a negative entry -n
  // followed by the first page of n consecutive pages (midl.c, `mdb_midl_print`).
  const addList = (data: Buffer) => {
    const count = u64(data, 0);
    if ((count + 1) * 8 > data.length) throw new Error('a free list is longer than its record');
    for (let i = 1; i <= count; i++) {
      const entry = data.readBigInt64LE(i * 8);
      if (entry === 0n) continue;
      if (entry > 0n) {
        addPages(Number(entry), 1);
        continue;
      }
      if (i === count) throw new Error('a free list run has no first page');
      addPages(u64(data, ++i * 8), Number(-entry));
    }
  };
  const addPages = (first: number, n: number) => {
    if (first < 0 || n > lastPage + 1) throw new Error(`a free list names pages ${first}+${n} out of range`);
    for (let page = Math.max(first, from); page < first + n; page++) free.add(page);
  };
  const visit = (pgno: number, depth: number) => {
    if (depth > 64) throw new Error('the free database is deeper than 64 levels');
    if (pgno < 2 || pgno > lastPage) throw new Error(`free database page ${pgno} is out of range`);
    const page = reader.read(pgno);
    const flags = page.readUInt16LE(18);
    const keys = page.readUInt16LE(20) >> 1;
    for (let i = 0; i < keys; i++) {
      const node = PAGE_HEADER + page.readUInt16LE(PAGE_HEADER + 2 * i);
      const lo = page.readUInt16LE(node);
      const hi = page.readUInt16LE(node + 2);
      const nodeFlags = page.readUInt16LE(node + 4);
      const keySize = page.readUInt16LE(node + 6);
      if (flags & P_BRANCH) {
        visit(lo + hi * 0x10000 + nodeFlags * 0x100000000, depth + 1);
      } else if (flags & P_LEAF) {
        const dataSize = lo + hi * 0x10000;
        const dataAt = node + 8 + keySize;
        if (nodeFlags & F_BIGDATA) {
          const overflow = u64(page, dataAt);
          if (overflow < 2 || overflow > lastPage)
            throw new Error(`free list overflow page ${overflow} is out of range`);
          const pages = Math.ceil((PAGE_HEADER + dataSize) / reader.pageSize);
          addList(reader.read(overflow, pages).subarray(PAGE_HEADER, PAGE_HEADER + dataSize));
        } else {
          if (dataAt + dataSize > page.length) throw new Error(`free database page ${pgno} has a node past its end`);
          addList(page.subarray(dataAt, dataAt + dataSize));
        }
      } else {
        throw new Error(`free database page ${pgno} is neither branch nor leaf (flags ${flags})`);
      }
    }
  };
  visit(root, 0);
  return free;
}
