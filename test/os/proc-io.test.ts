import assert from 'node:assert/strict';
import { closeSync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseProcIo, readProcIo, threadCpuNs } from '../../os/index.js';
import { tempDir } from '../support/temp.js';

const SAMPLE = `rchar: 557934
wchar: 1626627
syscr: 267
syscw: 720
read_bytes: 4780032
write_bytes: 3448832
cancelled_write_bytes: 0
`;

describe('/proc/self/io and the thread CPU clock', () => {
  it('parses the write counters of an io file, and refuses one without them', () => {
    assert.deepEqual(parseProcIo(SAMPLE), { writeCallBytes: 1_626_627, writeCalls: 720, storageWriteBytes: 3_448_832 });
    assert.equal(parseProcIo('rchar: 1\nsyscr: 2\n'), undefined);
    assert.equal(parseProcIo(SAMPLE.replace('720', 'x')), undefined);
  });

  it('counts the bytes and calls of a write made here', { skip: readProcIo() === undefined }, () => {
    const before = readProcIo()!;
    const fd = openSync(join(tempDir(), 'f'), 'w');
    try {
      writeSync(fd, Buffer.alloc(8192, 1));
      fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
    const after = readProcIo()!;
    assert.ok(after.writeCallBytes - before.writeCallBytes >= 8192);
    assert.ok(after.writeCalls > before.writeCalls);
  });

  it("counts this thread's CPU time", { skip: threadCpuNs() === undefined }, () => {
    const before = threadCpuNs()!;
    let spin = 0;
    // Enough work to cross more than one scheduler accounting step.
    for (let i = 0; i < 5e7; i++) spin += i & 1;
    assert.ok(spin > 0);
    assert.ok(threadCpuNs()! > before);
  });
});
