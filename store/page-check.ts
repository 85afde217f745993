import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { StoreError } from './errors.js';
import { checkLmdbPages, type PageKind } from './lmdb-pages.js';
import { checkDataFileTail } from './lmdb-tail.js';

/** What `storage_corrupt` tells an operator to do. */
export const RESTORE_ADVICE = 'restore the state root from a backup (ordivon restore BACKUP --state ROOT --force)';

/**
 * Checks the structure of `root/lmdb/data.mdb` with `pread` before LMDB maps it (lmdb-pages.ts):
 * LMDB trusts its pages, and a damaged one would take the reading process down with SIGSEGV or
 * SIGBUS instead of a code. Fails `storage_corrupt` naming the page (number, kind, tree) and the
 * advice to restore from a backup; `storage_failed` when a page the last commit reaches lies past
 * the end of the file (truncated). A missing file (a new root) is LMDB's to create.
 */
export function checkPagesBeforeOpen(root: string, readOnly: boolean): void {
  const dataFile = join(root, 'lmdb', 'data.mdb');
  if (!existsSync(dataFile)) return;
  const check = checkLmdbPages(dataFile, { writable: !readOnly });
  if (check.kind === 'damaged') throw pageCorrupt(root, check);
  if (check.kind === 'short') {
    // How many of the pages past the end the free list does not name (lmdb-tail.ts).
    const tail = checkDataFileTail(dataFile, check.pageSize, check.lastPage, check.txnId);
    const missing = Math.max(tail.missingPages, 1);
    throw new StoreError(
      'storage_failed',
      `${dataFile} is truncated: ${check.size} bytes, ${missing} page(s) its last commit reaches are missing before ${tail.lastPageEnd} (page ${check.page} the first reached)${tail.problem ? ` (${tail.problem})` : ''}`,
      { root, object: 'lmdb/data.mdb' },
    );
  }
}

/** The `storage_corrupt` error of a damaged page. */
export function pageCorrupt(
  root: string,
  found: { page: number; pageKind: PageKind; tree: string; problem: string },
): StoreError {
  const { page, pageKind, tree, problem } = found;
  return new StoreError(
    'storage_corrupt',
    `${join(root, 'lmdb', 'data.mdb')} is damaged at page ${page} (${pageKind}): ${problem}; ${RESTORE_ADVICE}`,
    { root, object: 'lmdb/data.mdb', page: { number: page, kind: pageKind, tree } },
  );
}

/**
 * A `storage_corrupt` error as a boot or `doctor` finding (the same one in both): its code, the
 * file, the page and the message with the advice; undefined for any other error.
 */
export function storageFinding(
  error: unknown,
):
  | { code: 'storage_corrupt'; object: string; page: { number: number; kind: PageKind; tree: string }; message: string }
  | undefined {
  if (!(error instanceof StoreError) || error.code !== 'storage_corrupt') return undefined;
  const { object, page } = error.details as { object: string; page: { number: number; kind: PageKind; tree: string } };
  return { code: 'storage_corrupt', object, page, message: error.message };
}
