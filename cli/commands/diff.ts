import { EXIT, emit } from '../cli-io.js';
import { command, positional } from '../command.js';

/**
 * `ordivon diff TASK_ID`: the unified diff from the Task's seed to its accepted attempt's
 * workspace, source files only (what the source digest hashes: no `.git`, `node_modules`, caches,
 * nor the required artifacts). Refused `no_outcome` (the Task did not complete),
 * `workspace_changed` (the workspace is no longer the tree the outcome binds) or `seed_changed`
 * (the seed directory moved since the Task was seeded).
 */
export const diff = command({
  name: 'diff',
  summary: "the accepted change: a unified diff of the Task's seed against its accepted workspace",
  details: [
    'Source files only (as the source digest counts them: no .git, node_modules or caches, no required artifacts).',
    'Exit 1 no_outcome, workspace_changed (edited after acceptance) or seed_changed (the seed moved since).',
  ],
  positionals: { taskId: positional('TASK_ID', 'the completed Task') },
  async run(values, io) {
    const { acceptedOf, acceptedPatch, readTaskRecords } = await import('./work-back.js');
    const answer = await readTaskRecords(values.state, values.taskId, async (root, task) => {
      const accepted = await acceptedOf(root, task);
      return {
        taskId: accepted.taskId,
        outcomeDigest: accepted.outcomeDigest,
        sourceDigest: accepted.sourceDigest,
        workspace: accepted.workspace,
        patch: await acceptedPatch(accepted),
      };
    });
    emit(io, answer, () => answer.patch.replace(/\n$/, ''));
    return EXIT.ok;
  },
});
