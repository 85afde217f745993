import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { CliError } from '../../cli/cli-io.js';

const CLI = fileURLToPath(new URL('../../cli/ordivon.js', import.meta.url));

/**
 * Runs `ordivon demo --state STATE --json ARGS…` as a child process (a separate OS process: a
 * fresh Host), relaying its stderr line by line through `say`, and resolves with the JSON it
 * printed on stdout. Rejects `demo_failed` when it printed no JSON.
 */
export async function demoChild(state: string, args: string[], say: (text: string) => void): Promise<unknown> {
  const sub = execa(process.execPath, [CLI, 'demo', '--state', state, '--json', ...args], {
    reject: false,
    stdin: 'ignore',
  });
  sub.stderr?.setEncoding('utf8');
  let partial = '';
  sub.stderr?.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) say(line);
  });
  const done = await sub;
  if (partial) say(partial);
  try {
    return JSON.parse(String(done.stdout)) as unknown;
  } catch {
    throw new CliError('demo_failed', `demo child (${args.join(' ')}) exited ${done.exitCode} without a report`);
  }
}
