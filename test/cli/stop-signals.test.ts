import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const STOP_SIGNALS = fileURLToPath(new URL('../../cli/stop-signals.js', import.meta.url));

/**
 * A process that listens with `onStopSignal`, then starts an execa subprocess (execa's cleanup
 * registers a signal listener of its own, after ours), prints `ready`, and on the signal takes a turn of its
 * event loop (the drain, shortened) before it ends the subprocess and exits 0.
 */
const SCRIPT = `
const { onStopSignal } = await import(process.env.STOP_SIGNALS);
const { execa } = await import('execa');
let sleeper;
onStopSignal(async (signal) => {
  await new Promise((resolve) => setImmediate(resolve));
  sleeper.kill('SIGKILL');
  await sleeper;
  console.log('drained after ' + signal);
  process.exit(0);
});
// Started after the listener, as serve's are: execa's own listener is the later one.
sleeper = execa('sleep', ['300'], { reject: false });
console.log('ready');
`;

async function signalled(signal: NodeJS.Signals, times: number): Promise<{ code: number | null; said: string[] }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', SCRIPT], {
    cwd: fileURLToPath(new URL('../../..', import.meta.url)),
    env: { ...process.env, STOP_SIGNALS },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const said: string[] = [];
  const lines = createInterface({ input: child.stdout! });
  lines.on('line', (line) => said.push(line));
  const [first] = (await once(lines, 'line')) as [string];
  assert.equal(first, 'ready');
  for (let i = 0; i < times; i++) child.kill(signal);
  const [code, killedBy] = (await once(child, 'exit')) as [number | null, NodeJS.Signals | null];
  assert.equal(killedBy, null, `the process died of ${killedBy}`);
  return { code, said };
}

describe('stop signals with an execa subprocess running', () => {
  it('SIGTERM runs the drain to its end: the process exits 0, not killed by the signal execa re-raises', async () => {
    assert.deepEqual(await signalled('SIGTERM', 1), { code: 0, said: ['ready', 'drained after SIGTERM'] });
  });

  it('a second SIGINT during the drain is ignored', async () => {
    assert.deepEqual(await signalled('SIGINT', 2), { code: 0, said: ['ready', 'drained after SIGINT'] });
  });
});
