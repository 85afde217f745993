import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { StoreError } from '../../store/index.js';
import { HEADER_BYTES, Journal, crc32c, nodeJournalFs, type JournalFs } from '../../store/journal/index.js';
import { UNSYNCED, crashState, recordingFs, syncBoundaries, type FsOp } from '../support/recording-fs.js';
import { tempDir } from '../support/temp.js';

const DIGEST = new Uint8Array(32).fill(7);
const code = (error: unknown) => (error instanceof StoreError ? error.code : undefined);
/** A payload that names its append, of a size that varies with it (some larger than a test segment). */
const payloadOf = (id: string) => Buffer.from(`${id};`.repeat(1 + ((id.length * 37) % 90)));

describe('crc32c', () => {
  it('gives the CRC-32C check value and continues across chunks', () => {
    const bytes = Buffer.from('123456789');
    assert.equal(crc32c(bytes), 0xe3069283);
    assert.equal(crc32c(bytes, 4, 9, crc32c(bytes, 0, 4)), 0xe3069283);
    const long = Buffer.alloc(1000, 0xa5);
    assert.equal(crc32c(long), crc32c(long, 500, 1000, crc32c(long, 0, 500)));
  });
});

/** Appends one record and resolves with its position once its group is synced. */
async function appended(journal: Journal, payload: Uint8Array): Promise<number> {
  const { seq, synced } = journal.append(payload, DIGEST);
  await synced;
  return seq;
}

describe('Journal', () => {
  it('commits appends made together in one write and one fdatasync, and acknowledges each only after it', async () => {
    const trace: FsOp[] = [];
    const { journal } = Journal.open({ dir: join(tempDir(), 'journal'), fs: recordingFs(trace) });
    const start = trace.length;
    const seqs = await Promise.all(
      Array.from({ length: 64 }, (_, i) =>
        appended(journal, payloadOf(`a${i}`)).then((seq) => {
          trace.push({ op: 'ack', id: String(seq) });
          return seq;
        }),
      ),
    );
    await journal.close();
    const ops = trace.slice(start);
    assert.equal(ops.filter((op) => op.op === 'write').length, 1, 'one write');
    assert.equal(ops.filter((op) => op.op === 'sync').length, 1, 'one fdatasync');
    assert.equal(
      ops.findIndex((op) => op.op === 'ack'),
      2,
      'no acknowledgement before the sync',
    );
    assert.deepEqual(
      seqs,
      Array.from({ length: 64 }, (_, i) => i + 1),
    );
  });

  it('reopens with every record after the applied position, in order, and numbers on from there', async () => {
    const dir = join(tempDir(), 'journal');
    let { journal } = Journal.open({ dir, segmentBytes: 512 });
    for (let i = 0; i < 20; i++) await appended(journal, payloadOf(`r${i}`));
    await journal.close();
    const reopened = Journal.open({ dir, segmentBytes: 512, after: 5 });
    journal = reopened.journal;
    assert.deepEqual(
      reopened.records.map((r) => [r.seq, Buffer.from(r.payload).toString()]),
      Array.from({ length: 15 }, (_, i) => [i + 6, payloadOf(`r${i + 5}`).toString()]),
    );
    assert.equal(await appended(journal, payloadOf('next')), 21);
    await journal.close();
  });

  it('refuses a damaged record followed by a valid record of a later write journal_corrupt', async () => {
    const dir = join(tempDir(), 'journal');
    const { journal } = Journal.open({ dir, segmentBytes: 1 << 16 });
    for (let i = 0; i < 3; i++) await appended(journal, payloadOf(`c${i}`));
    await journal.close();
    const path = join(dir, '0000000000000001.seg');
    const bytes = readFileSync(path);
    bytes[HEADER_BYTES + 2]! ^= 0xff; // the first record's payload, synced before the two after it were written
    writeFileSync(path, bytes);
    assert.throws(
      () => Journal.open({ dir }),
      (e) => code(e) === 'journal_corrupt',
    );
  });

  it('stops at a failed fdatasync: that group and every later append fail journal_failed, and it never syncs again', async () => {
    let syncs = 0;
    let fail = true;
    const failing: JournalFs = {
      ...nodeJournalFs,
      fdatasync: async (fd) => {
        syncs++;
        if (fail) throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
        await nodeJournalFs.fdatasync(fd);
      },
    };
    const { journal } = Journal.open({ dir: join(tempDir(), 'journal'), fs: failing });
    await assert.rejects(appended(journal, payloadOf('x')), (e) => code(e) === 'journal_failed');
    fail = false;
    assert.throws(
      () => journal.append(payloadOf('y'), DIGEST),
      (e) => code(e) === 'journal_failed',
      'a later append is refused before it is numbered',
    );
    assert.equal(syncs, 1, 'no retry of the sync');
    await journal.close();
  });

  it('keeps every acknowledged record and admits nothing torn, cut at every sync boundary', async () => {
    const root = tempDir();
    const dir = join(root, 'journal');
    const trace: FsOp[] = [];
    const fs = recordingFs(trace);
    const { journal } = Journal.open({ dir, fs, segmentBytes: 1024 });
    const idOfSeq = new Map<number, string>();
    const append = (id: string) => {
      const { seq, synced } = journal.append(payloadOf(id), DIGEST);
      idOfSeq.set(seq, id);
      return synced.then(() => {
        trace.push({ op: 'ack', id });
        return seq;
      });
    };
    let applied = 0;
    for (let wave = 0; wave < 4; wave++) {
      const seqs = await Promise.all(Array.from({ length: 1 + wave * 2 }, (_, i) => append(`w${wave}-${i}`)));
      await append(`s${wave}`);
      // What the store does once LMDB's applied position is durable: segments before it go.
      if (wave % 2 === 1) {
        applied = Math.max(...seqs);
        trace.push({ op: 'ack', id: `applied:${applied}` });
        journal.release(applied);
      }
    }
    await journal.close();
    assert.ok(
      trace.some((op) => op.op === 'unlink'),
      'the workload released a segment',
    );
    let states = 0;
    for (const cut of syncBoundaries(trace)) {
      for (const unsynced of UNSYNCED) {
        const into = tempDir();
        const acked = crashState(trace, cut, unsynced, root, into);
        const after = Math.max(
          0,
          ...[...acked].filter((id) => id.startsWith('applied:')).map((id) => Number(id.slice(8))),
        );
        const where = `cut ${cut} (${trace[cut - 1]?.op ?? 'start'}), unsynced ${unsynced}`;
        const opened = Journal.open({ dir: join(into, 'journal'), segmentBytes: 1024, after });
        const seqs = opened.records.map((r) => r.seq);
        assert.deepEqual(seqs, seqs.length ? Array.from({ length: seqs.length }, (_, i) => after + 1 + i) : [], where);
        for (const record of opened.records)
          assert.deepEqual(
            Buffer.from(record.payload),
            payloadOf(idOfSeq.get(record.seq)!),
            `${where}: record ${record.seq} intact`,
          );
        const found = new Set(opened.records.map((r) => idOfSeq.get(r.seq)));
        for (const [seq, id] of idOfSeq)
          if (acked.has(id) && seq > after)
            assert.ok(found.has(id), `${where}: acknowledged ${id} (record ${seq}) kept`);
        // The journal goes on after the cut, and a record written there survives the next open.
        const next = await appended(opened.journal, payloadOf('after-crash'));
        await opened.journal.close();
        const again = Journal.open({ dir: join(into, 'journal'), segmentBytes: 1024, after });
        assert.deepEqual(Buffer.from(again.records.at(-1)!.payload), payloadOf('after-crash'), where);
        assert.equal(again.records.at(-1)!.seq, next, where);
        await again.journal.close();
        states++;
      }
    }
    assert.ok(states > 50, `${states} crash states checked`);
  });
});
