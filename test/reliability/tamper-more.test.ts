import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { HostError } from '../../kernel/errors.js';
import { createSupervisor } from '../../kernel/supervisor.js';
import { tempDir } from '../support/temp.js';
import { tamper, twoTaskRoot } from '../support/tamper.js';
import { DOCUMENTED_CODES } from './documented-codes.js';

const CLI = fileURLToPath(new URL('../../cli/ordivon.js', import.meta.url));
let pristine: string;

/** A healthy state root with two Tasks; each case damages its own copy. Complements test/recovery/recovery.test.ts. */
before(async () => {
  pristine = (await twoTaskRoot()).root;
});

function copyOfPristine(): string {
  const root = join(tempDir(), 'state');
  cpSync(pristine, root, { recursive: true });
  return root;
}

/** Runs the CLI in a child process: a damaged store must never take the process down with a signal. */
function cli(args: string[]): { status: number | null; signal: NodeJS.Signals | null; json: any } {
  const r = spawnSync(process.execPath, [CLI, ...args, '--json'], { encoding: 'utf8' });
  let json: unknown;
  try {
    // A result on stdout; an error (doctor's findings included) as {"error": …} on stderr.
    json = JSON.parse(r.stdout || r.stderr);
  } catch {
    json = { unparsed: r.stdout, stderr: r.stderr };
  }
  return { status: r.status, signal: r.signal, json };
}

async function bootFailure(root: string): Promise<HostError> {
  const sup = createSupervisor({ state: root });
  const error = await sup.start().then(
    () => assert.fail('boot succeeded on a damaged root'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof HostError, String(error));
  assert.equal(sup.status, 'failed');
  assert.ok(DOCUMENTED_CODES.has(error.code), `undocumented code ${error.code}`);
  return error;
}

describe('tampering matrix, beyond the five basic cases', () => {
  it('a swapped pair of events fails boot with stream_corrupt naming the Task and revision; doctor agrees', async () => {
    const root = copyOfPristine();
    await tamper(root, (env) => {
      const events = env.openDB('events', { encoding: 'binary' });
      const two = events.getBinary(['task-a', 2] as never)!;
      const three = events.getBinary(['task-a', 3] as never)!;
      events.putSync(['task-a', 2] as never, Buffer.from(three));
      events.putSync(['task-a', 3] as never, Buffer.from(two));
    });
    const error = await bootFailure(root);
    assert.equal(error.code, 'stream_corrupt');
    const finding = error.findings.find((f) => f.code === 'stream_corrupt')!;
    assert.equal(finding.taskId, 'task-a');
    assert.ok(finding.revision === 2 || finding.revision === 3, `revision ${finding.revision}`);

    const { status, json } = cli(['doctor', '--state', root]);
    assert.equal(status, 1);
    const named = json.error.findings.find((f: any) => f.code === 'stream_corrupt');
    assert.deepEqual([named.taskId, named.revision], ['task-a', finding.revision]);
    assert.match(named.object ?? named.message, /event|revision|chain|digest/i);
  });

  it('a truncated lmdb/data.mdb fails boot with storage_failed naming the file, and no process dies of SIGBUS', async () => {
    const root = copyOfPristine();
    const data = join(root, 'lmdb', 'data.mdb');
    truncateSync(data, Math.floor(statSync(data).size / 4 / 4096) * 4096 || 8192);
    const error = await bootFailure(root);
    assert.equal(error.code, 'storage_failed');
    assert.match(error.message, /data\.mdb is truncated/);

    for (const args of [
      ['doctor', '--state', root],
      ['list', '--state', root],
      ['send', 'task-a', '{"type":"task.cancel","reason":"x"}', '--state', root],
    ]) {
      const r = cli(args);
      assert.equal(r.signal, null, `${args[0]} died of ${r.signal}`);
      assert.equal(r.status, 1, `${args[0]}: ${JSON.stringify(r.json)}`);
      assert.equal(r.json.error.code, 'storage_failed');
      assert.match(r.json.error.message, /lmdb\/data\.mdb/);
    }
  });

  it('an unknown format version fails boot with format_unknown naming format.json; doctor agrees; nothing is rewritten', async () => {
    const root = copyOfPristine();
    const format = join(root, 'format.json');
    const text = JSON.stringify({ format: 'ordivon-state', version: 99 });
    writeFileSync(format, text);
    const error = await bootFailure(root);
    assert.equal(error.code, 'format_unknown');
    assert.match(error.message, /format\.json/);
    const r = cli(['doctor', '--state', root]);
    assert.deepEqual([r.status, r.json.error.code], [1, 'format_unknown']);
    assert.match(r.json.error.message, /format\.json/);
    const { readFileSync } = await import('node:fs');
    assert.equal(readFileSync(format, 'utf8'), text);
  });

  it('a head pointing past the last event fails boot with a documented code naming the Task', async () => {
    const root = copyOfPristine();
    await tamper(root, (env) => {
      const heads = env.openDB('heads', {});
      const head = heads.get('task-b' as never) as { revision: number; digest: string };
      heads.putSync('task-b' as never, { ...head, revision: head.revision + 1 });
    });
    const error = await bootFailure(root);
    assert.ok(
      error.findings.some((f) => f.taskId === 'task-b'),
      JSON.stringify(error.findings),
    );
    const r = cli(['doctor', '--state', root]);
    assert.equal(r.status, 1);
    assert.ok(
      r.json.error.findings.some((f: any) => f.taskId === 'task-b' && f.code === error.code),
      JSON.stringify(r.json.findings),
    );
  });
});
