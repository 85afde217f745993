import { stringFlag } from './command.js';

/** The configuration file a command reads from the current directory when `--config` is not given. */
export const CONFIG_FILE = 'ordivon.config.json';

/** `--config FILE`, shared by the commands that run harnesses (./config.ts reads the file, when they run). */
export const configFlag = stringFlag(
  'FILE',
  `the harness configuration (default: ./${CONFIG_FILE} when present)`,
  (z) => z.string().min(1, 'must not be empty').optional(),
);
