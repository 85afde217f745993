import { command } from '../command.js';
import { SPEC_FIELDS_HELP } from '../spec-fields.js';
import { runFlags } from './run-flags.js';

/**
 * `ordivon run --spec FILE [--config FILE] --stages NAME=HARNESS,… [--task ID]`: creates the Task
 * (or resumes it by id), commits each stage's Assignment in order and waits for it, and prints the
 * outcome. Progress goes to stderr, one line per commit. Exit 0 completed; 1 not completed, naming
 * why (a stage that settled without its artifacts, a refused completion, a failed verification, a
 * cancelled or blocked Task); 2 bad input, refused before the state root is opened.
 *
 * Resuming reads only durable state: a stage one of whose Assignments settled with everything it
 * produces (or completed the Task) is skipped; an Assignment still in flight from a process that
 * died is waited for (the Host reconciles or observes it at boot), then its stage is committed
 * again if it did not finish. A stage this run commits and that does not finish ends the run.
 */
export const run = command({
  name: 'run',
  summary: 'run a Task from a spec through its stages with configured harnesses; resume it by id',
  details: [
    "Creates the Task (or resumes it: --task ID, or the spec's taskId), then commits each stage of --stages in",
    'order with its harness and waits for it; stages already finished are skipped. Progress on stderr.',
    'Exit 0 completed, 1 not completed (the reason is printed), 2 bad input (nothing written).',
    SPEC_FIELDS_HELP,
  ],
  flags: runFlags,
  async run(values, io): Promise<number> {
    // The Host and its harnesses load when the command runs, not with the command table.
    return (await import('./run.js')).runTask(values, io);
  },
});
