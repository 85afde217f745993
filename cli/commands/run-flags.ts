import { booleanFlag, stringFlag, type Args } from '../command.js';
import { configFlag } from '../config-flag.js';
import { StagesFlag } from '../stages-flag.js';
import { applyFlags } from './apply-command.js';

/** The flags of `ordivon run`, apart from its command so its handler can name their type without importing the command. */
export const runFlags = {
  spec: stringFlag(
    'FILE',
    'the JSON spec of the Task',
    (z) => z.string({ error: 'required' }).min(1, 'must not be empty'),
    {
      required: true,
    },
  ),
  config: configFlag,
  stages: stringFlag('NAME=HARNESS,…', 'the stages to run, in order, each with its harness', StagesFlag, {
    required: true,
  }),
  task: stringFlag('ID', "the Task's id (else the spec's taskId, else a new one)", async () =>
    (await import('../../store/records.js')).TaskId.optional(),
  ),
  apply: booleanFlag('once completed, commit the accepted change on a new branch of --repo (as ordivon apply)'),
  ...applyFlags,
  quiet: booleanFlag('no "still running" line every 10 s while a stage works (the line per commit stays)'),
};

/** What `ordivon run`'s handler receives. */
export type RunArgs = Args<typeof runFlags>;
