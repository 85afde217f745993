export { PgHistory, DEFAULT_LEASE_MS, type PgHistoryOptions } from './pg-history.js';
export type { TaskCopy } from './task-copy.js';
export { redact } from './pg-pool.js';
export type { HeldLease } from './pg-leases.js';
export type { StoredJob } from './pg-jobs.js';
export { SCHEMA_SQL, SCHEMA_VERSION } from './schema.js';
export { TaskWatch, DEFAULT_POLL_MS, type TaskWatchOptions, type WatchedCommits } from './task-watch.js';
export { CommitNotifier, COMMITS_CHANNEL, MAX_PAYLOAD_BYTES, notifyPayloads } from './commit-notifier.js';
export type { SharedEvent, SharedTask } from './task-reads.js';
