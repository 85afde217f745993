import { closeSync, fstatSync, openSync } from 'node:fs';
import {
  F_BIGDATA,
  MAGIC,
  forEachFreeRun,
  META,
  PAGE_HEADER,
  P_BRANCH,
  P_LEAF,
  PageReader,
  u64,
} from './lmdb-layout.js';

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
 * The layout it reads is in lmdb-layout.ts.
 */

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

/** Free page numbers ≥ `from` listed by the free database of the meta page of `txnId`. */
function freePagesFrom(reader: PageReader, lastPage: number, txnId: number, from: number): Set<number> {
  let root: number | undefined;
  for (const metaPage of [0, 1]) {
    const page = reader.read(metaPage);
    if (page.readUInt32LE(META.magic) !== MAGIC) continue;
    if (u64(page, META.txnid) === txnId && u64(page, META.lastPage) === lastPage) root = u64(page, META.free + 40);
  }
  if (root === undefined) throw new Error(`no meta page names transaction ${txnId} and last page ${lastPage}`);
  const free = new Set<number>();
  if (root === -1) return free; // empty free database
  const addList = (data: Buffer) => forEachFreeRun(data, addPages);
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
