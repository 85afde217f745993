import { booleanFlag, stringFlag, type Args } from '../../cli/command.js';

/** The flags of `ordivon demo`, apart from its command so its handler can name their type without importing the command. */
export const demoFlags = {
  'acp-agent': stringFlag(
    'opencode|hermes-like',
    'the ACP agent behind the hermes harness: the real opencode acp or the faster scripted Hermes-like one',
    (z) => z.enum(['opencode', 'hermes-like'], { error: 'must be opencode or hermes-like' }).default('opencode'),
    { fallback: 'opencode' },
  ),
  workload: stringFlag(
    'hamilton|round1|world-w1|loop-compare|branch-join',
    'the hamilton-v1 repair, the round1-v1 maintenance world (decisions on a read set), World W1 (Effects on a provider and in a browser), Loop v0 against the one-shot gateway and the mature harnesses on the three frozen workloads, or branch and join (best of three on duration-v1, a fan-out of child Tasks)',
    (z) =>
      z
        .enum(['hamilton', 'round1', 'world-w1', 'loop-compare', 'branch-join'], {
          error: 'must be hamilton, round1, world-w1, loop-compare or branch-join',
        })
        .default('hamilton'),
    { fallback: 'hamilton' },
  ),
  only: stringFlag('SCENARIO,...', "the scenarios to run, comma-separated (of the chosen workload's)", (z) =>
    z
      .string()
      .optional()
      .transform((only) => only?.split(',').map((s) => s.trim())),
  ),
  fresh: booleanFlag('delete the state root first'),
  'f3-phase': stringFlag(
    'lose|reconcile',
    "one half of F3 (the demo's own child processes)",
    (z) => z.enum(['lose', 'reconcile']).optional(),
    { internal: true },
  ),
  task: stringFlag(
    'TASK_ID',
    'the F3 Task to reconcile (with --f3-phase reconcile)',
    (z) => z.string().min(1).optional(),
    {
      internal: true,
    },
  ),
  'continuation-phase': stringFlag(
    'lose|continue',
    "one half of the continuation after loss of round1 or world-w1 (the demo's own child processes)",
    (z) => z.enum(['lose', 'continue']).optional(),
    { internal: true },
  ),
  ledger: stringFlag('URL', 'the ledger the continuation phase uses', (z) => z.url().optional(), { internal: true }),
  provider: stringFlag('URL', "the provider World W1's continuation phase uses", (z) => z.url().optional(), {
    internal: true,
  }),
};

/** What `ordivon demo`'s handler receives. */
export type DemoArgs = Args<typeof demoFlags>;
