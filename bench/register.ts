import type { CliRegistration } from '../cli/extensions.js';
import { bench } from './cli.js';

/**
 * What the benchmarks add to `ordivon` (cli/extensions.ts loads this module when a command line
 * needs more than the CLI's own commands): `ordivon bench`, listed last. Only its command table
 * loads here (the scenarios' names); the suite loads when it runs.
 */
export const registration: CliRegistration = {
  commandsAfter: [bench],
};
