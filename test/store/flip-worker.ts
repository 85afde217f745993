import { cpSync, openSync, readSync, rmSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import { HostError } from '../../kernel/errors.js';
import { createSupervisor } from '../../kernel/supervisor.js';
import { CliError } from '../../cli/cli-io.js';
import { doctor } from '../../cli/commands/inspect.js';
import { FlipBatch, type FlipResult } from './flip-plan.js';

/**
 * A child process of data-file-flips.test.ts: for each flip of its batch, a copy of the pristine
 * state root with one byte of `lmdb/data.mdb` XORed, checked by `doctor` and then by a boot, in
 * this process. It prints `{"start": i}` before each flip and `{"i", "doctor", "boot"}` after
 * it, so that a flip that kills the process (a signal) is known to the parent by the last start.
 * With `raw`, each copy is read by lmdb directly, every value of every database, with no check
 * before: what the store did before the page check (a crash there is what the check prevents).
 */
function applyFlip(file: string, offset: number, mask: number): void {
  const fd = openSync(file, 'r+');
  try {
    const byte = Buffer.alloc(1);
    readSync(fd, byte, 0, 1, offset);
    byte[0] = byte[0]! ^ mask;
    writeSync(fd, byte, 0, 1, offset);
  } finally {
    closeSync(fd);
  }
}

async function doctorCodes(root: string): Promise<{ codes: string[]; page?: string }> {
  const io = { json: true, out: () => {}, err: () => {} };
  try {
    await doctor.run({ state: root, full: false } as never, io);
    return { codes: [] };
  } catch (error) {
    if (!(error instanceof CliError)) return { codes: [`uncoded: ${(error as Error).message}`] };
    const findings = (error.details as { findings?: Array<{ code: string; page?: { number: number; kind: string } }> })
      .findings;
    const page = findings?.[0]?.page;
    return {
      codes: findings ? findings.map((f) => f.code) : [error.code],
      ...(page ? { page: `${page.kind} ${page.number}` } : {}),
    };
  }
}

async function bootCodes(root: string): Promise<string[]> {
  const sup = createSupervisor({ state: root });
  try {
    await sup.start();
  } catch (error) {
    if (!(error instanceof HostError)) return [`uncoded: ${(error as Error).message}`];
    return error.findings.length > 0 ? error.findings.map((f) => f.code) : [error.code];
  }
  await sup.stop();
  return [];
}

/** Reads every value of every database through lmdb, as the store did with no page check. */
async function rawRead(root: string): Promise<string[]> {
  let env: ReturnType<typeof open> | undefined;
  try {
    env = open({ path: join(root, 'lmdb'), readOnly: true, maxDbs: 16 });
    for (const name of ['objects', 'blobs', 'events', 'heads', 'projections', 'indexes', 'meta']) {
      const db = env.openDB<Buffer, string>(name, { encoding: 'binary' });
      for (const { value } of db.getRange()) if (value.length < 0) throw new Error('unreachable');
    }
    return [];
  } catch (error) {
    return [`lmdb: ${(error as Error).message.slice(0, 60)}`];
  } finally {
    await env?.close();
  }
}

async function main(): Promise<void> {
  const batch = FlipBatch.parse(JSON.parse(process.argv[2]!));
  const root = join(batch.work, 'state');
  const data = join(root, 'lmdb', 'data.mdb');
  for (const flip of batch.flips) {
    process.stdout.write(JSON.stringify({ start: flip.i }) + '\n');
    rmSync(root, { recursive: true, force: true });
    cpSync(batch.pristine, root, { recursive: true });
    applyFlip(data, flip.offset, flip.mask);
    let result: FlipResult;
    if (batch.raw) {
      result = { i: flip.i, doctor: await rawRead(root), boot: [] };
    } else {
      const found = await doctorCodes(root);
      // A boot writes (a checkpoint, the lock, the mirror mark): doctor reads the flipped copy first.
      result = {
        i: flip.i,
        doctor: found.codes,
        boot: await bootCodes(root),
        ...(found.page ? { page: found.page } : {}),
      };
    }
    process.stdout.write(JSON.stringify(result) + '\n');
  }
}

await main();
