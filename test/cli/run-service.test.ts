import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { killProcessesUnder } from '../support/temp.js';
import { until } from '../support/until.js';
import { CLI, lastError, ordivon, runFixture, type RunFixture } from './run-fixture.js';

const RUN = ['run', '--spec', 'spec.json', '--stages', 'investigate=a,fix=b', '--state', 'state', '--json'];

/** `ordivon run` as a child process, its provider of stage `fix` hanging (the fixture's `fix-hang-once`). */
function startRun(f: RunFixture) {
  const child = spawn(process.execPath, [CLI, ...RUN], { cwd: f.dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  void exited.then(() => process.off('exit', kill));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

/**
 * Starts `ordivon run` with its provider of stage `fix` hanging and runs `fn` once that stage hangs
 * and the run serves its control API; then kills the run, and the provider if the Host did not.
 */
async function whileHanging(fn: (f: RunFixture, run: ReturnType<typeof startRun>) => Promise<void>): Promise<void> {
  const f = runFixture();
  f.configure('fix-hang-once');
  const run = startRun(f);
  try {
    await until('the fix stage hangs and service.json is written', 60_000, async () => {
      if (run.child.exitCode !== null) throw new Error(`run exited ${run.child.exitCode}: ${run.stderr()}`);
      return existsSync(f.hangMark) && existsSync(join(f.state, 'service.json')) ? true : undefined;
    });
    await fn(f, run);
  } finally {
    run.child.kill('SIGKILL');
    killProcessesUnder(f.dir);
  }
}

describe('ordivon run serves the control API on its state root', { timeout: 180_000 }, () => {
  it('takes task.cancel and answers show and list from another process, then exits 1 task_cancelled and removes service.json', () =>
    whileHanging(async (f, run) => {
      const info = JSON.parse(readFileSync(join(f.state, 'service.json'), 'utf8'));
      assert.deepEqual(
        [info.pid, info.socket, info.tokenRequired],
        [run.child.pid, join(f.state, 'service.sock'), false],
      );

      const shown = ordivon(f.dir, 'show', 'run-1', '--state', 'state', '--json');
      assert.equal(shown.status, 0, shown.stderr);
      assert.deepEqual([shown.json().taskId, shown.json().state], ['run-1', 'assigned.running']);
      const listed = ordivon(f.dir, 'list', '--state', 'state', '--json');
      assert.equal(listed.status, 0, listed.stderr);
      assert.deepEqual(
        listed.json().map((t: { taskId: string }) => t.taskId),
        ['run-1'],
      );

      const sent = ordivon(
        f.dir,
        'send',
        'run-1',
        JSON.stringify({ type: 'task.cancel', reason: 'stopped from another shell' }),
        '--state',
        'state',
        '--json',
      );
      assert.equal(sent.status, 0, sent.stderr);
      assert.deepEqual([sent.json().admitted, sent.json().state], [true, 'cancelled']);

      assert.equal(await run.exited, 1, run.stderr());
      assert.equal(run.stdout(), '');
      const out = lastError(run.stderr());
      assert.deepEqual([out.state, out.completed, out.code], ['cancelled', false, 'task_cancelled']);
      assert.match(out.message, /stopped from another shell/);
      assert.ok(!existsSync(join(f.state, 'service.json')), 'service.json removed');
      assert.ok(!existsSync(join(f.state, 'service.sock')), 'socket removed');
    }));

  it('stops serving and removes service.json when interrupted by SIGTERM', () =>
    whileHanging(async (f, run) => {
      run.child.kill('SIGTERM');
      assert.equal(await run.exited, 1, run.stderr());
      assert.equal(lastError(run.stderr()).code, 'interrupted');
      assert.ok(!existsSync(join(f.state, 'service.json')), 'service.json removed');
      // Nothing holds the state root now: send works on it directly.
      const sent = ordivon(
        f.dir,
        'send',
        'run-1',
        JSON.stringify({ type: 'task.cancel', reason: 'after the run' }),
        '--state',
        'state',
        '--json',
      );
      assert.equal(sent.status, 0, sent.stderr);
    }));

  it('exits 130 on SIGINT (the shell convention for Ctrl-C), answering interrupted', () =>
    whileHanging(async (f, run) => {
      run.child.kill('SIGINT');
      assert.equal(await run.exited, 130, run.stderr());
      assert.equal(lastError(run.stderr()).code, 'interrupted');
      assert.ok(!existsSync(join(f.state, 'service.json')), 'service.json removed');
    }));
});
