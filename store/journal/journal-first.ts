import type { StoreDatabases } from '../databases.js';
import { StoreError } from '../errors.js';
import { digestBytes, encodeEntry, writeEntry, type JournalEntry } from './entry.js';
import type { Journal } from './journal.js';

/**
 * The journal-first commit of a store opened with a journal: the entry is queued in the journal
 * and, in the same turn, written to LMDB as one conditional batch (the event's key still free, the
 * applied position in the same transaction), so LMDB's commit runs beside the journal's write and
 * sync instead of after them. The append is acknowledged once both hold: its group's fdatasync
 * returned (durable) and its LMDB commit is visible (not flushed: until LMDB's own flush the
 * journal holds the transition, and the next open re-applies it). What LMDB shows before the sync
 * returned is acknowledged to no one; should the sync fail, the journal and this store stop
 * (`journal_failed`, fail-stop) and such a transition counts as a commit whose answer was lost. A
 * journaled transition LMDB could not apply stops this store's appends too (`journal_failed`):
 * the next open applies it.
 */
export class JournalFirstCommit {
  /** Set when the journal failed or LMDB could not apply a journaled transition: LMDB may then be behind the journal, and only a reopen (which replays it) may take appends again. */
  private stopped: StoreError | undefined;
  private releasing = false;

  constructor(
    private readonly journal: Journal,
    private readonly dbs: StoreDatabases,
  ) {}

  /** Throws what stopped this store's appends, if anything did. */
  assertRunning(): void {
    if (this.stopped) throw this.stopped;
  }

  /** Resolves true once the entry is durable in the journal and applied in LMDB; false when the event's key was taken. */
  async commit(entry: JournalEntry): Promise<boolean> {
    const { journal, dbs } = this;
    const { taskId, revision } = entry;
    const { seq, synced } = journal.append(encodeEntry(entry), digestBytes(entry.digest));
    const commit = dbs.events.ifNoExists([taskId, revision], () => writeEntry(dbs, entry, seq));
    const [sync, applied] = await Promise.allSettled([synced, commit]);
    if (sync.status === 'rejected') {
      this.stopped ??= sync.reason as StoreError;
      throw sync.reason;
    }
    if (applied.status === 'rejected') {
      this.stopped ??= new StoreError(
        'journal_failed',
        `task ${taskId} revision ${revision} is in the journal but LMDB could not apply it (${(applied.reason as Error).message}); no append is taken until the store is opened again, which applies it`,
        { taskId, revision },
        { cause: applied.reason },
      );
      throw this.stopped;
    }
    this.releaseSealed(seq);
    return applied.value;
  }

  /** Lets the journal drop its sealed segments up to `seq`, once LMDB's applied position past them is on disk. */
  private releaseSealed(seq: number): void {
    const { journal } = this;
    const sealed = journal.sealedThrough;
    if (sealed === undefined || sealed > seq || this.releasing) return;
    this.releasing = true;
    void this.dbs.env.flushed
      .then(() => journal.release(seq))
      .finally(() => {
        this.releasing = false;
      });
  }
}
