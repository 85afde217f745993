import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { digestOf } from '../canonical.js';
import type { StoreDatabases } from '../databases.js';
import { StoreError } from '../errors.js';
import { APPLIED_KEY, appliedPosition, decodeEntry, digestBytes, writeEntry, type JournalEntry } from './entry.js';
import type { JournalFs } from './fs.js';
import { Journal } from './journal.js';

/** How a writable LMDB store keeps its journal (`OpenOptions.journal`). */
export interface JournalSettings {
  /** The file-system calls (default node:fs): a crash test records them. */
  fs?: JournalFs;
  /** Bytes of a new segment (default 4 MiB). */
  segmentBytes?: number;
}

/** The journal's directory in a state root. */
export const journalDir = (root: string) => join(root, 'journal');

/**
 * Opens the state root's journal and applies to LMDB, in one synchronous transaction, every
 * record after LMDB's applied position; a record whose event LMDB already holds is skipped
 * (idempotent: LMDB may have applied it without its position reaching the disk before the
 * crash), one whose stored event differs is `journal_corrupt`. Without `settings` (the journal
 * switched off) a root's existing journal is still applied, then closed; none is created.
 * Resolves `released` once the applied records are durable in LMDB and the segments they filled
 * are removed.
 */
export function openStoreJournal(
  root: string,
  dbs: StoreDatabases,
  settings: JournalSettings | undefined,
): { journal: Journal | undefined; replayed: number } {
  const dir = journalDir(root);
  if (settings === undefined && !existsSync(dir)) return { journal: undefined, replayed: 0 };
  const after = appliedPosition(dbs);
  const { journal, records } = Journal.open({ dir, after, ...settings });
  try {
    const entries = records.map((record) => {
      const entry = decodeEntry(record.payload, record.seq);
      if (digestOf(entry.record) !== entry.digest || !digestBytes(entry.digest).equals(record.digest))
        throw new StoreError(
          'journal_corrupt',
          `journal record ${record.seq} (task ${entry.taskId} revision ${entry.revision}) does not match its digest`,
          { taskId: entry.taskId, revision: entry.revision },
        );
      return { seq: record.seq, entry };
    });
    if (entries.length > 0) {
      dbs.env.transactionSync(() => {
        for (const { seq, entry } of entries) if (!applied(dbs, entry)) writeEntry(dbs, entry, seq);
        void dbs.meta.put(APPLIED_KEY, entries.at(-1)!.seq);
      });
    }
    const position = entries.at(-1)?.seq ?? after;
    if (journal.sealedThrough !== undefined && journal.sealedThrough <= position)
      void dbs.env.flushed.then(() => journal.release(position));
    if (settings === undefined) void journal.close();
    return { journal: settings === undefined ? undefined : journal, replayed: entries.length };
  } catch (error) {
    void journal.close();
    throw error;
  }
}

/** Whether LMDB already holds the entry's event (then it is not written again); a different event there is corruption. */
function applied(dbs: StoreDatabases, entry: JournalEntry): boolean {
  const stored = dbs.events.get([entry.taskId, entry.revision]);
  if (stored === undefined) return false;
  if (digestOf(stored) === entry.digest) return true;
  throw new StoreError(
    'journal_corrupt',
    `task ${entry.taskId} revision ${entry.revision} in the journal differs from the event LMDB holds`,
    { taskId: entry.taskId, revision: entry.revision },
  );
}
