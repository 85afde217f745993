import { EXIT, emit, type Io } from '../cli-io.js';
import { command, positional, stringFlag } from '../command.js';

// The definition of `apply` and its flags; ./apply.ts, loaded when it runs, does the work.

/** `--repo DIR` and `--branch NAME`: shared by `apply` and `run --apply`. */
export const applyFlags = {
  repo: stringFlag('DIR', 'the git repository to commit to (default: the current directory)', (z) =>
    z.string().min(1, 'must not be empty').optional(),
  ),
  branch: stringFlag('NAME', 'the new branch (default: ordivon/<taskId>)', (z) =>
    z.string().min(1, 'must not be empty').optional(),
  ),
};

/**
 * `ordivon apply TASK_ID [--repo DIR] [--branch NAME]`: the accepted change as one commit on a
 * new branch (`applyAccepted`). Exit 1 with `no_outcome`, `workspace_changed`, `not_a_repository`,
 * `repo_dirty`, `repo_mismatch`, `branch_exists` or `git_failed`; nothing is written then.
 */
export const apply = command({
  name: 'apply',
  summary: 'the accepted change as one commit on a new branch of your git repository (its checkout untouched)',
  details: [
    "HEAD must be the tree the Task was seeded with, tracked files unmodified, the branch new. The commit's message",
    'names the Task and the outcome digest; the current branch, index and working tree are not touched.',
  ],
  positionals: { taskId: positional('TASK_ID', 'the completed Task') },
  flags: applyFlags,
  async run(values, io: Io) {
    const [{ applyAccepted, appliedText }, { acceptedOf, readTaskRecords }] = await Promise.all([
      import('./apply.js'),
      import('./work-back.js'),
    ]);
    const applied = await readTaskRecords(values.state, values.taskId, async (root, task) =>
      applyAccepted(await acceptedOf(root, task), values.repo, values.branch),
    );
    emit(io, { taskId: values.taskId, ...applied }, () => appliedText(applied));
    return EXIT.ok;
  },
});
