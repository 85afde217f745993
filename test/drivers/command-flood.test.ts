import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { OutputTail, STDOUT_TAIL_BYTES } from '../../drivers/command/index.js';
import { createDriverPool, type DriverPool } from '../../drivers/pool.js';
import { shRun, workspace } from '../fixtures/drivers/run-inputs.js';

const MB = 1024 * 1024;
const LINE = 'flood line of output\n';

describe('OutputTail', () => {
  it('holds at most its cap while 50 MB pass through in uneven chunks, and keeps the true tail', () => {
    const tail = new OutputTail(64 * 1024);
    const block = Buffer.from(LINE.repeat(10_000));
    let fed = 0;
    let maxRetained = 0;
    for (let i = 0; fed < 50 * MB; i++) {
      const chunk = block.subarray(0, 1 + ((i * 7919) % block.length));
      tail.push(chunk);
      fed += chunk.length;
      maxRetained = Math.max(maxRetained, tail.retainedBytes);
    }
    tail.push(Buffer.from('\nlast words\n'));
    assert.ok(maxRetained <= 64 * 1024, `retained ${maxRetained} bytes`);
    assert.equal(tail.bytes, fed + 12);
    assert.equal(tail.lastLine(100), 'last words');
  });

  const lineCases: [string, string[], number][] = [
    ['no output', [], 0],
    ['one unterminated line', ['abc'], 1],
    ['a line split across chunks', ['ab', 'c\n'], 1],
    ['empty lines are not messages', ['\n\n', 'x\n', '\n'], 1],
    ['a newline arriving alone after text', ['abc', '\n', 'def'], 2],
    ['blank-only chunk between lines', ['a\n', '\n', '\nb\n'], 2],
  ];
  for (const [name, chunks, lines] of lineCases) {
    it(`counts ${lines} non-empty line(s) for ${name}`, () => {
      const tail = new OutputTail(8);
      for (const chunk of chunks) tail.push(Buffer.from(chunk));
      assert.equal(tail.lines, lines);
    });
  }

  it('caps the final line to its last characters', () => {
    const tail = new OutputTail(1024);
    tail.push(Buffer.from('x'.repeat(500) + 'END\n'));
    assert.equal(tail.lastLine(10), 'xxxxxxxEND');
  });
});

describe('command driver under an output flood (through the pool)', () => {
  const ws = workspace();
  let pool: DriverPool;
  before(async () => {
    pool = createDriverPool({ minThreads: 1, maxThreads: 1 });
    // Warm the thread (module loading) so the memory figure is the flood's alone.
    await pool.run(shRun(ws.dir, 'true'));
  });
  after(async () => {
    await pool.close();
    ws.dispose();
  });

  it('keeps the Host process memory bounded while a command prints 200 MB', async (t) => {
    const bytes = 200 * MB;
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 10);
    const result = await pool.run(shRun(ws.dir, `yes "flood line of output" | head -c ${bytes}; echo; echo END`));
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    const growth = peak - before;
    t.diagnostic(
      `rss before ${Math.round(before / MB)} MB, peak growth ${Math.round(growth / MB)} MB for ${bytes / MB} MB of stdout (tail cap ${STDOUT_TAIL_BYTES} B)`,
    );
    assert.equal(result.ok && result.receipt.finalText, 'END');
    // Retaining the output would grow the process by at least its size; the bound is half of it.
    assert.ok(growth < bytes / 2, `rss grew ${Math.round(growth / MB)} MB`);
  });

  it('finishes a command printing 50 MB and keeps only the tail', async () => {
    const bytes = 50 * MB;
    const result = await pool.run(
      shRun(ws.dir, `yes "flood line of output" | head -c ${bytes}; echo; echo END-OF-FLOOD`),
    );
    assert.equal(result.ok, true, JSON.stringify(result));
    if (!result.ok) return;
    const fullLines = Math.floor(bytes / LINE.length);
    const partial = bytes % LINE.length > 0 ? 1 : 0;
    assert.deepEqual(result.receipt.usage, {
      stdoutBytes: bytes + 1 + 'END-OF-FLOOD\n'.length,
      stdoutLines: fullLines + partial + 1,
      stderrBytes: 0,
    });
    assert.equal(result.receipt.counts.messages, fullLines + partial + 1);
    assert.equal(result.receipt.finalText, 'END-OF-FLOOD');
  });
});
