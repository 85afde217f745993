export { Journal, type JournalOptions } from './journal.js';
export { JournalFirstCommit } from './journal-first.js';
export { nodeJournalFs, type JournalFs } from './fs.js';
export { crc32c } from './crc32c.js';
export { HEADER_BYTES, decodeRecord, encodeRecord, recordBytes, scanSegment, type JournalRecord } from './record.js';
export { openStoreJournal, journalDir, type JournalSettings } from './store-journal.js';
export {
  encodeEntry,
  decodeEntry,
  digestBytes,
  writeEntry,
  appliedPosition,
  APPLIED_KEY,
  type JournalEntry,
} from './entry.js';
