import { booleanFlag, command, positional } from '../command.js';

/**
 * `ordivon backup DEST`: a consistent copy of a state root, also while a supervisor serves it.
 * The Host's LMDB is copied as of one read transaction, then the Runtime's (so every job the
 * Host's copy names is in the Runtime's copy), then `format.json` and the workspaces (these are
 * scratch space: Task truth is in LMDB). The copy is checked like boot before it is reported.
 * Fails `backup_exists` (DEST not empty), `state_missing`, `format_unknown`, or the first finding's code.
 */
export const backup = command({
  name: 'backup',
  summary: 'a consistent, checked copy of the state root (also while it is served)',
  details: [
    "The Host's LMDB is copied as of one read transaction, then the Runtime's, format.json and the workspaces;",
    'the copy is checked like boot before it is published (by rename) at DEST.',
  ],
  positionals: { dest: positional('DEST', 'where the backup goes: a new or empty directory') },
  async run(values, io) {
    return (await import('./backup-copy.js')).backupTo(values, io);
  },
});

/**
 * `ordivon restore SRC [--force]`: brings a backup back as the state root. The backup is checked
 * like boot first; the root must be absent or empty unless `--force`, and no process may hold it
 * (`state_locked`). The new root is staged beside the old and swapped in by rename.
 * Fails `restore_not_empty`, `backup_invalid`, `state_locked`, or the first finding's code.
 */
export const restore = command({
  name: 'restore',
  summary: 'bring a backup back as the state root',
  details: ['The backup is checked like boot first, then swapped in by rename; no process may hold the state root.'],
  positionals: { src: positional('SRC', 'a directory made by ordivon backup') },
  flags: { force: booleanFlag('replace a state root that is not empty') },
  async run(values, io) {
    return (await import('./backup-copy.js')).restoreFrom(values, io);
  },
});
