import type { CliRegistration } from '../cli/extensions.js';
import { demo } from './demo/cli.js';

/**
 * What the workloads add to `ordivon` (cli/extensions.ts loads this module when a command line
 * needs more than the CLI's own commands): the `demo` command, listed first, and the scripted
 * harnesses of `serve --demo-harnesses`. Only the demo's command table loads here; its work, the
 * scripted servers and the Host load when it runs.
 */
export const registration: CliRegistration = {
  commands: [demo],
  demoHarnesses: async (acpAgent) => (await import('./shared/harnesses.js')).demoHarnesses(acpAgent),
};
