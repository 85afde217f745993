import { closeSync, fstatSync, openSync } from 'node:fs';
import {
  DATA_VERSION,
  DB_DUPSORT,
  DB_RECORD,
  F_BIGDATA,
  F_DUPDATA,
  F_SUBDATA,
  MAGIC,
  META,
  NODE_HEADER,
  PAGE_HEADER,
  P_BRANCH,
  P_LEAF,
  P_META,
  P_OVERFLOW,
  forEachFreeRun,
  readBytes,
  readDbRecord,
  u64,
  type DbRecord,
} from './lmdb-layout.js';

/** What a page of the data file is, as the current meta page's trees reach it. */
export type PageKind = 'meta' | 'branch' | 'leaf' | 'overflow' | 'free-list';

/** A page that LMDB would trust and must not: its number, its kind, the tree it is in and what is wrong. */
export interface PageProblem {
  page: number;
  pageKind: PageKind;
  /** `free` (the free list), `main` (the named databases' directory) or a named database. */
  tree: string;
  problem: string;
}

/** The meta page LMDB opens, as the page check read it. */
export interface PickedMeta {
  pageSize: number;
  txnId: number;
  lastPage: number;
}

export type PagesCheck =
  | ({ kind: 'sound'; pages: number } & PickedMeta)
  /** A page the trees reach lies past the end of the file (reading it through the map raises SIGBUS). */
  | ({ kind: 'short'; size: number; page: number } & PickedMeta)
  | ({ kind: 'damaged' } & PageProblem)
  /** A writer committed throughout every attempt: pages were reused under the walk, nothing can be said. */
  | { kind: 'unsettled'; attempts: number };

/** Roles of pages in `PageMap.roles` (tests pick pages to damage by them). */
export const PAGE_ROLE = { none: 0, meta: 1, branch: 2, leaf: 3, overflow: 4, freeList: 5, free: 6 } as const;

export interface PageMap {
  pageSize: number;
  roles: Uint8Array;
}

export interface CheckPagesOptions {
  /** Also check the half-page meta that only a writable open (lmdb-js's overlapping sync) reads. */
  writable?: boolean;
  /** Fill in each page's role (`PAGE_ROLE`), for tests. */
  map?: (map: PageMap) => void;
}

const MAX_DEPTH = 32; // mdb.c's CURSOR_STACK: a deeper tree overruns the cursor's page stack
const ATTEMPTS = 5;

class PastEnd extends Error {
  constructor(readonly page: number) {
    super(`page ${page} is past the end of the file`);
  }
}

class Damage extends Error {
  constructor(readonly found: PageProblem) {
    super(found.problem);
  }
}

/**
 * Checks the structure of the LMDB data file `dataFile` before anything maps it: LMDB trusts its
 * pages, so a damaged page number, size or offset makes the process that reads through the map
 * die of SIGSEGV or SIGBUS, or abort on one of its assertions. Reads with `pread` only, and only
 * what the current meta page reaches (one page at a time, each once): the meta pages (magic,
 * version, page size, transaction ids, last page, roots), then every branch, leaf and overflow
 * page of the free list, of the directory of named databases and of each named database (page
 * number matching its offset, flags of the kind its place in the tree wants, bounds, node offsets
 * and sizes within the page, key sizes within LMDB's limit, child and overflow page numbers within
 * the last page and the file, overflow counts, each page reached once, no page both used and listed
 * free, the depth and page and entry counts each tree's record states).
 *
 * Beside a live writer the pages of the snapshot read may be reused under the walk (the walk holds
 * no reader slot): a problem found (a damaged page, or one past the end of the file) while the
 * meta's transaction changed is checked again, up to five times, and then `unsettled`.
 */
export function checkLmdbPages(dataFile: string, options: CheckPagesOptions = {}): PagesCheck {
  const fd = openSync(dataFile, 'r');
  try {
    for (let attempt = 1; ; attempt++) {
      // Both meta pages are read apart, so a commit between them is caught by this too.
      const before = latestTxnId(fd);
      try {
        const meta = readMetas(fd, fstatSync(fd).size, options.writable ?? false);
        // The size after the meta: a writer extends the file with a commit's pages before it
        // writes that commit's meta.
        const size = fstatSync(fd).size;
        try {
          const pages = new TreeWalk(fd, meta, size, options.map).run();
          return { kind: 'sound', pages, ...picked(meta) };
        } catch (error) {
          if (!(error instanceof PastEnd)) throw error;
          if (latestTxnId(fd) === before) return { kind: 'short', size, page: error.page, ...picked(meta) };
        }
      } catch (error) {
        if (!(error instanceof Damage)) throw error;
        if (latestTxnId(fd) === before) return { kind: 'damaged', ...error.found };
      }
      if (attempt === ATTEMPTS) return { kind: 'unsettled', attempts: attempt };
    }
  } finally {
    closeSync(fd);
  }
}

/** What a meta page says, and which slot it is in. */
interface Meta extends PickedMeta {
  slot: number;
  mapSize: number;
  free: DbRecord;
  main: DbRecord;
}

function picked(meta: Meta): PickedMeta {
  return { pageSize: meta.pageSize, txnId: meta.txnId, lastPage: meta.lastPage };
}

function damage(page: number, kind: PageKind, tree: string, problem: string): never {
  throw new Damage({ page, pageKind: kind, tree, problem });
}

/** The larger transaction id of the two meta pages, or -1 when they cannot be read. */
function latestTxnId(fd: number): number {
  try {
    const first = readBytes(fd, 0, META.txnid + 8);
    const pageSize = readDbRecord(first, META.free).pad;
    const second = readBytes(fd, pageSize, META.txnid + 8);
    return Math.max(u64(first, META.txnid), u64(second, META.txnid));
  } catch {
    return -1;
  }
}

/**
 * Reads and checks both meta pages (and the half-page one a writable open reads) and returns
 * the one LMDB's transactions use: the larger transaction id, the first on a tie
 * (`mdb_env_pick_meta`). Each commit writes the slot of its transaction id's parity, so the two
 * ids differ by one (both 0 in a new file): a flipped bit in the older one's id that would make
 * LMDB open a stale snapshot is caught here.
 */
function readMetas(fd: number, size: number, writable: boolean): Meta {
  const first = readMetaPage(fd, 0, size, undefined);
  const second = readMetaPage(fd, 1, size, first.pageSize);
  if (first.txnId !== 0 || second.txnId !== 0) {
    if (Math.abs(first.txnId - second.txnId) !== 1)
      damage(1, 'meta', 'meta', `meta pages name transactions ${first.txnId} and ${second.txnId}, not consecutive`);
  }
  const latest = second.txnId > first.txnId ? second : first;
  if (writable) checkHalfMeta(fd, latest);
  for (const [db, tree] of [
    [latest.free, 'free'],
    [latest.main, 'main'],
  ] as const)
    checkTreeRecord(latest.lastPage, db, (problem) =>
      damage(latest.slot, 'meta', tree, `meta page ${latest.slot}, ${tree} tree: ${problem}`),
    );
  return latest;
}

function readMetaPage(fd: number, slot: number, size: number, pageSize: number | undefined): Meta {
  const at = slot * (pageSize ?? 0);
  if (at + META.txnid + 8 > size) damage(slot, 'meta', 'meta', `meta page ${slot} is past the end of the file`);
  const page = readBytes(fd, at, META.txnid + 8);
  const bad = (problem: string) => damage(slot, 'meta', 'meta', `meta page ${slot}: ${problem}`);
  if (page.readUInt16LE(18) !== P_META) bad(`flags ${page.readUInt16LE(18)} are not a meta page's`);
  if (page.readUInt32LE(META.magic) !== MAGIC) bad('its magic number is wrong');
  if ((page.readUInt32LE(META.version) & 0xffff) !== DATA_VERSION) bad(`version ${page.readUInt32LE(META.version)}`);
  const meta = metaFields(page, 0, slot, bad);
  if (pageSize !== undefined && meta.pageSize !== pageSize)
    bad(`page size ${meta.pageSize}, meta page 0 says ${pageSize}`);
  if (meta.txnId !== 0 && meta.txnId % 2 !== slot) bad(`transaction ${meta.txnId} is not of this slot's parity`);
  return meta;
}

/** The meta fields at `at` (a meta page's start, or the half-page meta's). */
function metaFields(page: Buffer, at: number, slot: number, bad: (problem: string) => never): Meta {
  let meta: Meta;
  try {
    meta = {
      slot,
      pageSize: readDbRecord(page, at + META.free).pad,
      mapSize: u64(page, at + META.mapsize),
      txnId: u64(page, at + META.txnid),
      lastPage: u64(page, at + META.lastPage),
      free: readDbRecord(page, at + META.free),
      main: readDbRecord(page, at + META.main),
    };
  } catch (error) {
    return bad((error as Error).message);
  }
  const { pageSize, lastPage, mapSize, txnId } = meta;
  if (pageSize < 512 || pageSize > 0x10000 || (pageSize & (pageSize - 1)) !== 0) bad(`page size ${pageSize}`);
  if (lastPage < 1 || txnId < 0) bad(`last page ${lastPage}, transaction ${txnId}`);
  if ((lastPage + 1) * pageSize > mapSize) bad(`last page ${lastPage} lies beyond the map size ${mapSize}`);
  return meta;
}

/**
 * lmdb-js's overlapping sync writes the meta of each flushed commit in the second half of page
 * 0, and a writable open takes its page size and last page when its transaction id is the
 * largest (`mdb_env_read_header`). Never written, it is zeros.
 */
function checkHalfMeta(fd: number, latest: Meta): void {
  const at = latest.pageSize >> 1;
  const page = readBytes(fd, at, META.txnid + 8);
  const txnId = page.readBigUInt64LE(META.txnid);
  if (txnId === 0n) return;
  const bad = (problem: string) => damage(0, 'meta', 'meta', `the flushed meta in page 0: ${problem}`);
  if (txnId > BigInt(latest.txnId)) bad(`transaction ${txnId} is after the last commit ${latest.txnId}`);
  const half = metaFields(page, 0, 0, bad);
  if (half.pageSize !== latest.pageSize) bad(`page size ${half.pageSize}, meta page 0 says ${latest.pageSize}`);
}

function checkTreeRecord(lastPage: number, db: DbRecord, bad: (problem: string) => never): void {
  if (db.root === -1) {
    if (db.depth !== 0) bad(`an empty tree of depth ${db.depth}`);
    return;
  }
  if (db.root < 2 || db.root > lastPage) bad(`root page ${db.root} is outside pages 2–${lastPage}`);
  if (db.depth < 1 || db.depth > MAX_DEPTH) bad(`depth ${db.depth}`);
}

/** One tree being walked: its record, its name and what it was found to hold. */
interface Walk {
  db: DbRecord;
  tree: string;
  counts: { branch: number; leaf: number; overflow: number; entries: number };
}

/** A leaf node: its bytes (from its header to the page's end), where it is, its flags. */
interface LeafNode {
  bytes: Buffer;
  pgno: number;
  i: number;
  flags: number;
  bad: (problem: string) => never;
}

/** A walk of every page the picked meta reaches. */
class TreeWalk {
  private readonly roles: Uint8Array;
  /** For a page a free list names: the free-list leaf naming it (+1), to name it when a tree uses the page. */
  private readonly listedBy: Int32Array;
  private readonly pageSize: number;
  private readonly maxKey: number;
  private pages = 2;

  constructor(
    private readonly fd: number,
    private readonly meta: Meta,
    private readonly size: number,
    private readonly onMap: ((map: PageMap) => void) | undefined,
  ) {
    this.pageSize = meta.pageSize;
    this.roles = new Uint8Array(meta.lastPage + 1);
    this.roles[0] = this.roles[1] = PAGE_ROLE.meta;
    this.listedBy = new Int32Array(meta.lastPage + 1);
    // mdb.c: me_nodemax = (((psize - PAGEHDRSZ) / MDB_MINKEYS) & -2) - sizeof(indx_t), and the
    // largest key leaves room for a node header and a named database's record.
    this.maxKey = (((this.pageSize - PAGE_HEADER) / 2) & -2) - 2 - (NODE_HEADER + DB_RECORD);
  }

  run(): number {
    this.tree(this.meta.free, 'free');
    this.tree(this.meta.main, 'main');
    this.onMap?.({ pageSize: this.pageSize, roles: this.roles });
    return this.pages;
  }

  private read(page: number, count: number): Buffer {
    if ((page + count) * this.pageSize > this.size) throw new PastEnd(page);
    return readBytes(this.fd, page * this.pageSize, count * this.pageSize);
  }

  /** Walks one tree from its record, then checks the record's counts against what it holds. */
  private tree(db: DbRecord, tree: string): void {
    if (db.root === -1) return;
    const counts = { branch: 0, leaf: 0, overflow: 0, entries: 0 };
    this.visit({ db, tree, counts }, db.root, 1);
    const { branch, leaf, overflow, entries } = counts;
    if (
      branch !== db.branchPages ||
      leaf !== db.leafPages ||
      overflow !== db.overflowPages ||
      (entries !== db.entries && (db.flags & DB_DUPSORT) === 0)
    ) {
      const kind: PageKind = tree === 'free' ? 'free-list' : db.depth > 1 ? 'branch' : 'leaf';
      damage(
        db.root,
        kind,
        tree,
        `the ${tree} tree holds ${branch} branch, ${leaf} leaf, ${overflow} overflow pages and ${entries} entries; its record says ${db.branchPages}, ${db.leafPages}, ${db.overflowPages} and ${db.entries}`,
      );
    }
  }

  /** Marks `count` pages from `page` as reached once, as `role`. */
  private claim(page: number, count: number, role: number, at: { kind: PageKind; tree: string }): void {
    const { kind, tree } = at;
    for (let p = page; p < page + count; p++) {
      if (this.roles[p] === PAGE_ROLE.free) {
        const by = this.listedBy[p]! - 1;
        damage(by, 'free-list', 'free', `free-list page ${by} lists page ${p}, which the ${tree} tree uses`);
      }
      if (this.roles[p] !== PAGE_ROLE.none) damage(page, kind, tree, `page ${p} is reached twice`);
      this.roles[p] = role;
    }
    this.pages += count;
  }

  private visit(walk: Walk, pgno: number, level: number): void {
    const { db, tree, counts } = walk;
    const free = tree === 'free';
    const leafLevel = level === db.depth;
    const expected: PageKind = free ? 'free-list' : leafLevel ? 'leaf' : 'branch';
    const bad = (problem: string): never =>
      damage(pgno, expected, tree, `page ${pgno} (${expected}, ${tree}): ${problem}`);
    if (pgno < 2 || pgno > this.meta.lastPage) bad(`page number outside pages 2–${this.meta.lastPage}`);
    const role = free ? PAGE_ROLE.freeList : leafLevel ? PAGE_ROLE.leaf : PAGE_ROLE.branch;
    this.claim(pgno, 1, role, { kind: expected, tree });
    const page = this.read(pgno, 1);
    if (page.readBigUInt64LE(0) !== BigInt(pgno)) bad(`its header names page ${page.readBigUInt64LE(0)}`);
    if (page.readBigUInt64LE(8) > BigInt(this.meta.txnId))
      bad(`written by transaction ${page.readBigUInt64LE(8)}, after the last commit ${this.meta.txnId}`);
    const flags = page.readUInt16LE(18);
    const wanted = leafLevel ? P_LEAF : P_BRANCH;
    if (flags !== wanted)
      bad(`flags ${flags}, a ${leafLevel ? 'leaf' : 'branch'} at level ${level} of ${db.depth} wants ${wanted}`);
    const lower = page.readUInt16LE(20);
    const upper = page.readUInt16LE(22);
    // Offsets in a page count from the end of its header (mdb.c's PAGEBASE, ITS#7713).
    if (lower % 2 !== 0 || upper < lower || upper > this.pageSize - PAGE_HEADER)
      bad(`free space bounds ${lower}–${upper}`);
    const keys = lower >> 1;
    // mdb_page_search_root asserts (aborting the process) that a named database's branch has two keys.
    if (keys < (leafLevel || free ? 1 : 2)) bad(`${keys} keys`);
    if (leafLevel) counts.leaf++;
    else counts.branch++;
    for (let i = 0; i < keys; i++) {
      const offset = page.readUInt16LE(PAGE_HEADER + 2 * i);
      const node = PAGE_HEADER + offset;
      if (offset < upper || offset % 2 !== 0 || node + NODE_HEADER > this.pageSize)
        bad(`node ${i} at offset ${offset}`);
      const lo = page.readUInt16LE(node);
      const hi = page.readUInt16LE(node + 2);
      const nodeFlags = page.readUInt16LE(node + 4);
      const keySize = page.readUInt16LE(node + 6);
      if (keySize > this.maxKey || (keySize === 0 && (leafLevel || i > 0)))
        bad(`node ${i} has a key of ${keySize} bytes`);
      const dataAt = node + NODE_HEADER + keySize;
      if (dataAt > this.pageSize) bad(`node ${i}'s key runs past the page`);
      if (!leafLevel) {
        this.visit(walk, lo + hi * 0x10000 + nodeFlags * 0x100000000, level + 1);
        continue;
      }
      counts.entries++;
      const at = { bytes: page.subarray(node, this.pageSize), pgno, i, flags: nodeFlags, bad };
      this.leafNode(walk, at, lo + hi * 0x10000, dataAt - node);
    }
  }

  /** A leaf node's data: in the page, on overflow pages, or a named database's record. */
  private leafNode(walk: Walk, at: LeafNode, dataSize: number, dataAt: number): void {
    const { db, tree } = walk;
    const { bytes: node, pgno, i, flags, bad } = at;
    const allowed = F_BIGDATA | (tree === 'main' ? F_SUBDATA : 0) | ((db.flags & DB_DUPSORT) !== 0 ? F_DUPDATA : 0);
    if ((flags & ~allowed) !== 0 || (flags & F_BIGDATA && flags & F_SUBDATA)) bad(`node ${i} has flags ${flags}`);
    if ((db.flags & DB_DUPSORT) !== 0) bad('a database with duplicates, which the Host does not keep');
    if (tree === 'free' && dataAt - NODE_HEADER !== 8) bad(`node ${i}'s key is not a transaction id`);
    if (flags & F_BIGDATA) {
      if (dataAt + 8 > node.length) bad(`node ${i}'s overflow page number runs past the page`);
      const first = Number(BigInt.asIntN(64, node.readBigUInt64LE(dataAt)));
      const count = Math.floor((PAGE_HEADER - 1 + dataSize) / this.pageSize) + 1;
      this.overflow(walk, at, first, count);
      if (tree === 'free') this.freeList(pgno, this.read(first, count).subarray(PAGE_HEADER, PAGE_HEADER + dataSize));
      return;
    }
    if (dataAt + dataSize > node.length) bad(`node ${i}'s ${dataSize} bytes of data run past the page`);
    const data = node.subarray(dataAt, dataAt + dataSize);
    if (tree === 'free') this.freeList(pgno, data);
    if (flags & F_SUBDATA) {
      if (dataSize !== DB_RECORD) bad(`node ${i} is a named database's record of ${dataSize} bytes`);
      const name = node.subarray(NODE_HEADER, dataAt).toString('utf8');
      let record: DbRecord;
      try {
        record = readDbRecord(data, 0);
      } catch (error) {
        return bad(`named database ${name}: ${(error as Error).message}`);
      }
      checkTreeRecord(this.meta.lastPage, record, (problem) => bad(`named database ${name}: ${problem}`));
      this.tree(record, name);
    }
  }

  private overflow(walk: Walk, from: LeafNode, first: number, count: number): void {
    const { tree, counts } = walk;
    const { pgno, i } = from;
    const bad = (problem: string): never =>
      damage(first, 'overflow', tree, `overflow page ${first} (${tree}, from node ${i} of page ${pgno}): ${problem}`);
    if (first < 2 || first + count - 1 > this.meta.lastPage)
      bad(`pages ${first}–${first + count - 1} are outside pages 2–${this.meta.lastPage}`);
    const head = this.read(first, 1);
    if (head.readBigUInt64LE(0) !== BigInt(first)) bad(`its header names page ${head.readBigUInt64LE(0)}`);
    if (head.readUInt16LE(18) !== P_OVERFLOW) bad(`flags ${head.readUInt16LE(18)} are not an overflow page's`);
    const pages = head.readUInt32LE(20);
    // A value rewritten in place may keep a longer run than it needs (mdb_cursor_put).
    if (pages < count || first + pages - 1 > this.meta.lastPage)
      bad(`a run of ${pages} pages where ${count} are needed`);
    if ((first + pages) * this.pageSize > this.size) throw new PastEnd(first + pages - 1);
    this.claim(first, pages, tree === 'free' ? PAGE_ROLE.freeList : PAGE_ROLE.overflow, { kind: 'overflow', tree });
    counts.overflow += pages;
  }

  /** Marks the pages a free-list record names as free; a page both free and used is damage. */
  private freeList(pgno: number, data: Buffer): void {
    const bad = (problem: string): never => damage(pgno, 'free-list', 'free', `free-list page ${pgno}: ${problem}`);
    try {
      forEachFreeRun(data, (first, count) => {
        if (first < 2 || count < 1 || first + count - 1 > this.meta.lastPage)
          bad(`it lists pages ${first}+${count}, outside pages 2–${this.meta.lastPage}`);
        for (let p = first; p < first + count; p++) {
          if (this.roles[p] !== PAGE_ROLE.none) bad(`it lists page ${p}, which is in use or listed already`);
          this.roles[p] = PAGE_ROLE.free;
          this.listedBy[p] = pgno + 1;
        }
      });
    } catch (error) {
      if (error instanceof Damage) throw error;
      bad((error as Error).message);
    }
  }
}
