export {
  PgJournal,
  DEFAULT_LEASE_MS,
  redact,
  type PgJournalOptions,
  type HeldLease,
  type TaskCopy,
  type JobRow,
} from './pg-journal.js';
export { SCHEMA_SQL, SCHEMA_VERSION } from './schema.js';
