import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it, type TestContext } from 'node:test';
import {
  isLiveState,
  parseProcStat,
  pidExists,
  procStat,
  processAlive,
  processRunning,
  processStartTicks,
  groupLeader,
  signalGroup,
  spawnGroup,
  treeCpuMs,
} from '../../os/index.js';
import { tempDir } from '../support/temp.js';

/** A running child the test kills at its end. */
function child(t: TestContext, command: string, args: string[]): ChildProcess {
  const proc = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => void proc.kill('SIGKILL'));
  return proc;
}

async function firstLine(proc: ChildProcess): Promise<string> {
  for await (const line of createInterface({ input: proc.stdout! })) return line;
  throw new Error('the child printed nothing');
}

/** Re-reads until `condition` holds: the kernel changes a process's state asynchronously. */
async function eventually<T>(read: () => T, condition: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = read();
    if (condition(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('procStat (the one /proc/<pid>/stat parser)', () => {
  it('parses the fields after the last parenthesis when the command name holds spaces and ")"', () => {
    const fields = Array.from({ length: 49 }, (_, i) => String(i + 100));
    fields[0] = 'S'; // state
    fields[1] = '7'; // ppid
    fields[2] = '42'; // pgrp
    fields[11] = '30'; // utime
    fields[12] = '12'; // stime
    fields[19] = '123456'; // starttime
    assert.deepEqual(parseProcStat(`4242 (s) R 1 2 3) ${fields.join(' ')}\n`), {
      state: 'S',
      ppid: 7,
      pgrp: 42,
      startTicks: 123456,
      cpuTicks: 42,
    });
  });

  it('refuses text that is not a stat line', () => {
    for (const text of ['', 'no parenthesis at all', '1 (x) S 1 2']) assert.equal(parseProcStat(text), undefined, text);
  });

  it('reads a real process whose name holds spaces and ")" right: state, parent, group, start time', async (t) => {
    const dir = tempDir('ordivon-os-');
    const tricky = join(dir, 's) R 1 2 3');
    symlinkSync('/bin/sleep', tricky);
    const proc = child(t, tricky, ['300']);
    await once(proc, 'spawn'); // after the exec: the kernel names the process after the link
    const pid = proc.pid!;
    assert.equal(readFileSync(`/proc/${pid}/comm`, 'utf8').trim(), 's) R 1 2 3');
    const stat = procStat(pid);
    assert.ok(stat !== undefined);
    assert.equal(stat.ppid, process.pid);
    assert.ok(isLiveState(stat.state), `state ${stat.state}`);
    assert.equal(stat.pgrp, procStat(process.pid)!.pgrp, 'a child spawned attached shares our process group');
    assert.ok(stat.startTicks >= processStartTicks(process.pid), 'a child starts no earlier than its parent');
  });

  it('reads the group of a child spawned as a group leader as its own pid', async (t) => {
    const proc = spawnGroup('/bin/sleep', ['300'], { cwd: tempDir('ordivon-os-'), env: {} });
    t.after(() => void proc.kill('SIGKILL'));
    void proc.then(() => undefined);
    await once(proc, 'spawn');
    assert.equal(procStat(proc.pid!)?.pgrp, proc.pid);
  });

  it('answers undefined for a pid that is gone', async (t) => {
    const proc = child(t, '/bin/sh', ['-c', 'exit 0']);
    const pid = proc.pid!;
    await once(proc, 'exit'); // node has reaped it
    assert.equal(procStat(pid), undefined);
    assert.equal(processStartTicks(pid), 0);
    assert.equal(processRunning(pid), false);
  });

  it('tells the same process from a later one by its start time', async (t) => {
    const proc = child(t, '/bin/sleep', ['300']);
    await once(proc, 'spawn');
    const pid = proc.pid!;
    const ticks = processStartTicks(pid);
    assert.ok(ticks > 0);
    assert.equal(processAlive(pid, ticks), true);
    assert.equal(processAlive(pid, 0), true, 'an unknown start time matches any process with that pid');
    assert.equal(processAlive(pid, ticks + 1), false, 'another start time is another process');
  });

  it('counts a zombie as not running, though its pid still exists', async (t) => {
    // `sleep 0` becomes the child of the exec'd `sleep 300`, which never reaps it.
    const proc = child(t, '/bin/sh', ['-c', 'sleep 0 & echo $!; exec sleep 300']);
    const zombie = Number(await firstLine(proc));
    const stat = await eventually(
      () => procStat(zombie),
      (s) => s?.state === 'Z',
    );
    assert.equal(isLiveState(stat!.state), false);
    assert.equal(processRunning(zombie), false);
    assert.equal(processAlive(zombie, stat!.startTicks), false);
    assert.equal(pidExists(zombie), true, 'kill(pid, 0) still finds a zombie');
  });

  it('counts the CPU time of a process and of the children below it', async (t) => {
    // The child's own child burns CPU until its own clock says 300 ms, then prints and waits.
    const burn =
      "const s=Date.now();while(process.cpuUsage().user<300000){}console.log('done');setInterval(()=>{},1000)";
    const parent = `require('child_process').spawn(process.execPath,['-e',${JSON.stringify(burn)}],{stdio:['ignore','inherit','inherit']});setInterval(()=>{},1000)`;
    // Its own group, so the end of the test kills the grandchild too (it holds our stdout pipe open).
    const proc = spawn(process.execPath, ['-e', parent], { stdio: ['ignore', 'pipe', 'inherit'], detached: true });
    const leader = groupLeader(proc.pid!);
    t.after(() => void signalGroup(leader, 'SIGKILL'));
    assert.equal(await firstLine(proc), 'done');
    // /proc counts in clock ticks (usually 10 ms), so allow one tick short of the child's own figure.
    assert.ok(treeCpuMs(proc.pid!) >= 290, `tree CPU ${treeCpuMs(proc.pid!)} ms`);
    assert.equal(treeCpuMs(2 ** 22 + 1), 0, 'a pid that is no process has no tree');
  });
});
