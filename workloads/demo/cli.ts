import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { CliError } from '../../cli/cli-io.js';
import { command } from '../../cli/command.js';
import { demoFlags } from './flags.js';

/**
 * The packages the demo drives besides the library's own: the real Codex binary and the round1
 * ledger's SQLite driver (devDependencies), and opencode, which `npm run agents:install` puts in
 * `.agents/demo/` (a 177 MB linux-x64 binary). An installed package has the demo's code but none
 * of them.
 */
const DEMO_PACKAGES = ['@openai/codex/package.json', 'better-sqlite3'];
/** World W1 drives no agent: its provider keeps its records with the SQLite driver. */
const W1_PACKAGES = ['better-sqlite3'];
/** Branch and join drives its own scripted `command` agents only. */
const OWN_AGENTS = ['branch-join'];

/** Refuses `package_missing` (exit 1), naming each package the demo needs and cannot resolve. */
async function requireDemoPackages(workload: string, acpAgent: string): Promise<void> {
  const require = createRequire(import.meta.url);
  if (OWN_AGENTS.includes(workload)) return;
  const missing = (workload === 'world-w1' ? W1_PACKAGES : DEMO_PACKAGES)
    .filter((name) => {
      try {
        require.resolve(name);
        return false;
      } catch {
        return true;
      }
    })
    .map((name) => name.replace(/\/package\.json$/, ''));
  // The driver's module loads the OS helpers (execa): only when the demo runs, not with the command table.
  const { opencodeCommand } = await import('../../drivers/acp/index.js');
  const agent = workload !== 'world-w1' && acpAgent === 'opencode' && !existsSync(opencodeCommand().command);
  if (missing.length > 0 || agent)
    throw new CliError(
      'package_missing',
      [
        `the demo needs ${[...missing, ...(agent ? ['opencode-linux-x64'] : [])].join(', ')}:`,
        'run it from a clone after npm install',
        ...(agent ? ['and npm run agents:install (npm start does both; or --acp-agent hermes-like)'] : []),
      ].join(' '),
      { details: { missing: agent ? [...missing, 'opencode-linux-x64'] : missing } },
    );
}

/**
 * `ordivon demo` (`npm start`): the frozen hamilton-v1 repair workload end to end on the embedded
 * store. Runs both replacement orders, faults F1–F3 and the artifact-first case, each as its own
 * Task, then reads every result back from the durable state, prints one row per provider run and
 * one line per scenario, and exits 0 only if every expectation held (1 naming the first that did
 * not). F3's two halves run in two child processes: one loses the response and stops, a fresh one
 * reconciles. `--workload round1` runs the Round 1 maintenance world instead (round1.ts), and
 * `--workload world-w1` the comparison of Effects on a provider and in a browser (workloads/world-w1/demo.ts),
 * `--workload loop-compare` Loop v0 against the one-shot gateway and the mature harnesses
 * (workloads/loop-compare/), and `--workload branch-join` branch and join (workloads/branch-join/).
 */
export const demo = command({
  name: 'demo',
  summary:
    'a frozen workload end to end (npm start: the repair workload; --workload round1: the maintenance world; --workload world-w1: Effects on a provider and in a browser; --workload loop-compare: Loop v0 against the gateway and the mature harnesses; --workload branch-join: parallel Attempts and a fan-out of child Tasks)',
  details: [
    'hamilton: both orders, F1 F2 F3, artifact-first. round1: the world or the Goal revised mid-run (both orders),',
    "the README's action, an invented candidate, a late decision on a Context the Task left, then the continuation",
    'after a lost ledger answer (six trajectories across two fresh processes, and the plain-retry baseline).',
    'world-w1: each operation of a provider process, and a web form in Chromium, under each fault, through the Host',
    'and the plain integrations; prints one table (--only takes trajectory names such as orders-commit-then-drop).',
    'loop-compare: duration-v1, hamilton-v1 and round1-v1 by the one-shot gateway, Loop v0, codex app-server and',
    'opencode acp, each honest, claiming falsely and SIGKILLed mid-stage; prints one table and writes its results',
    'file in the state root (--only takes workload and variant names such as duration-v1,loop).',
    'branch-join: best of three on duration-v1 (a wrong fix refused, the right one verified, one that hangs',
    'cancelled and its late end refused superseded), then a fan-out of one child Task per defect of a small repo and',
    'a reviewer child over the joined change (--only takes best-of-three, fan-out).',
    'Each scenario is its own Task; every result is read back from the durable state. Exit 0 only if every',
    'expectation held, 1 naming the first that did not. An expectation comparing scenarios is checked only',
    'when --only ran all of them (else it is reported as not checked).',
  ],
  flags: demoFlags,
  async run(values, io): Promise<number> {
    await requireDemoPackages(values.workload, values['acp-agent']);
    // The workloads, the Host and the scripted models load when the demo runs, not with the command table.
    return (await import('./command.js')).runDemo(values, io);
  },
});
