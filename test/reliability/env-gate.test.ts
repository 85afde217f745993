import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, utimesSync, watch, writeFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { HostError } from '../../kernel/errors.js';
import { createSupervisor } from '../../kernel/supervisor.js';
import { main } from '../../cli/ordivon.js';
import { enterEnvGate } from '../../store/env-gate.js';
import { optionalPart } from '../support/optional-part.js';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';
import { DOCUMENTED_CODES } from './documented-codes.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/reliability/', import.meta.url));

/** Starts a fixture and returns it with an iterator over its stdout lines. */
function start(
  name: string,
  args: string[],
  command = process.execPath,
  prefix: string[] = [],
): { child: ChildProcess; lines: AsyncIterator<string> } {
  const child = spawn(command, [...prefix, join(FIXTURES, name), ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  return { child, lines: createInterface({ input: child.stdout! })[Symbol.asyncIterator]() };
}

async function next(lines: AsyncIterator<string>): Promise<string> {
  return (await lines.next()).value as string;
}

function exited(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null
    ? Promise.resolve(child.exitCode)
    : new Promise((resolve) => child.on('close', resolve));
}

function startTicks(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[19]);
}

function bootId(): string {
  return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
}

describe('LMDB open/close gate (store/env-gate.ts enterEnvGate)', () => {
  it(
    'a process asking for the gate waits while another live process holds it, and gets it once released',
    { timeout: 30_000 },
    async () => {
      const dir = tempDir('ordivon-gate-');
      const envDir = join(dir, 'lmdb');
      const log = join(dir, 'order.log');
      writeFileSync(log, '');
      const holder = start('gate-holder.js', [envDir, log]);
      assert.equal(await next(holder.lines), 'held');
      const waiter = start('gate-enter.js', [envDir, log]);
      assert.equal(await next(waiter.lines), 'waiting');
      assert.equal(
        JSON.parse(readFileSync(`${envDir}.gate`, 'utf8')).pid,
        holder.child.pid,
        'the gate names its holder',
      );
      holder.child.stdin!.end();
      assert.deepEqual(await Promise.all([exited(holder.child), exited(waiter.child)]), [0, 0]);
      // the waiter entered only after the holder let go (it asked before the holder was told to)
      assert.deepEqual(readFileSync(log, 'utf8').trim().split('\n'), ['holder leaving', 'waiter entered']);
      assert.equal(existsSync(`${envDir}.gate`), false, 'the gate is gone after its last holder left');
    },
  );

  it(
    'takes over a gate whose holder is gone: exited pid, reused pid (other start time), another boot, or a damaged file',
    { timeout: 30_000 },
    () => {
      const dir = tempDir('ordivon-gate-');
      const envDir = join(dir, 'lmdb');
      const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
        encoding: 'utf8',
      });
      const deadPid = Number(gone.stdout);
      const me = { pid: process.pid, host: hostname(), startTicks: startTicks(process.pid), bootId: bootId() };
      const stale = [
        { ...me, pid: deadPid },
        { ...me, startTicks: me.startTicks + 1 }, // this very pid, but another process's start time
        { ...me, bootId: 'another-boot' },
      ];
      for (const holder of stale) {
        writeFileSync(`${envDir}.gate`, JSON.stringify(holder));
        const leave = enterEnvGate(envDir);
        assert.deepEqual(
          JSON.parse(readFileSync(`${envDir}.gate`, 'utf8')),
          me,
          `a gate of ${JSON.stringify(holder)} was not taken over`,
        );
        leave();
        assert.equal(existsSync(`${envDir}.gate`), false);
      }
      writeFileSync(`${envDir}.gate`, '{"pid":');
      const old = new Date(Date.now() - 60_000);
      utimesSync(`${envDir}.gate`, old, old);
      enterEnvGate(envDir)();
      assert.equal(existsSync(`${envDir}.gate`), false);
      assert.equal(existsSync(`${envDir}.gate.takeover`), false, 'the takeover marker is removed');
    },
  );

  // The race itself, made certain instead of rare: strace delays the reader's lock-file calls, so it
  // is exactly between losing the exclusive lock and waiting for the shared one when the only other
  // user closes the environment. Without the gate that close destroys the lock region's mutexes
  // and the reader's first transaction fails EINVAL ("Invalid argument").
  const STRACE = optionalPart(
    'strace with ptrace permission',
    spawnSync('strace', ['-f', '-qq', '-e', 'trace=none', 'true']).status === 0 ? 'strace' : undefined,
    'apt-get install strace, and a ptrace-permitting sandbox',
  );
  it(
    'a reader opening while the last other user closes the environment reads normally',
    { timeout: 60_000, skip: STRACE.skip },
    async () => {
      STRACE.need();
      const root = join(tempDir('ordivon-gate-'), 'state');
      const sup = createSupervisor({ state: root });
      await sup.start();
      await sup.createTask({ ...SPEC, taskId: 'gated' });
      await sup.stop();
      const lockFile = join(root, 'lmdb', 'lock.mdb');

      const last = start('store-reader.js', [root, '--hold']);
      assert.equal(await next(last.lines), 'read 1 tasks');
      const trace = join(dirname(root), 'reader.strace');
      writeFileSync(trace, '');
      // Every fcntl on lock.mdb returns to the reader 1.5 s late; the first one fails (EAGAIN): the other user holds it.
      const strace = [
        '-f',
        '-qq',
        '-o',
        trace,
        '-P',
        lockFile,
        '-e',
        'trace=fcntl',
        '-e',
        'inject=fcntl:delay_exit=1500000',
        process.execPath,
      ];
      const reader = start('store-reader.js', [root], 'strace', strace);
      await lostExclusiveLock(trace);
      last.child.stdin!.end(); // the other user closes now, while the reader is between its lock calls
      assert.equal(await next(last.lines), 'closed');
      assert.equal(await next(reader.lines), 'read 1 tasks');
      assert.deepEqual(await Promise.all([exited(reader.child), exited(last.child)]), [0, 0]);
    },
  );

  it(
    'an environment whose lock region is unusable: boot and the CLI answer storage_failed (documented), never an uncoded error',
    { timeout: 60_000 },
    async () => {
      const root = join(tempDir('ordivon-gate-'), 'state');
      const sup = createSupervisor({ state: root });
      await sup.start();
      await sup.createTask({ ...SPEC, taskId: 'damaged' });
      await sup.stop();
      // Another process keeps the environment open, so nobody re-initialises the lock region; then
      // its mutexes (after the 24-byte header) are scribbled over, as lmdb's teardown race leaves them.
      const holder = start('store-reader.js', [root, '--hold']);
      assert.equal(await next(holder.lines), 'read 1 tasks');
      try {
        const fd = openSync(join(root, 'lmdb', 'lock.mdb'), 'r+');
        writeSync(fd, Buffer.alloc(120, 0xff), 0, 120, 24);
        closeSync(fd);
        const booting = createSupervisor({ state: root });
        await assert.rejects(
          booting.start(),
          (e) => e instanceof HostError && e.code === 'storage_failed' && /LMDB/.test(e.message),
        );
        assert.ok(DOCUMENTED_CODES.has('storage_failed'));
        let err = '';
        const code = await main(['show', 'damaged', '--state', root, '--json'], {
          json: true,
          out: () => {},
          err: (t) => (err += t),
        });
        assert.deepEqual([code, JSON.parse(err).error.code], [1, 'storage_failed']);
      } finally {
        holder.child.stdin!.end();
        await exited(holder.child);
      }
    },
  );
});

/** Resolves once the traced reader's try for the exclusive lock on lock.mdb has failed. */
function lostExclusiveLock(trace: string): Promise<void> {
  return new Promise((resolve) => {
    const check = (): void => {
      if (/F_WRLCK, l_whence=SEEK_SET, l_start=0, l_len=1\}\) = -1 EAGAIN/.test(readFileSync(trace, 'utf8'))) {
        watcher.close();
        resolve();
      }
    };
    const watcher = watch(trace, check);
    check();
  });
}
