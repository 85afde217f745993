import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, constants, linkSync, mkdirSync, openSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { collectArtifacts } from '../../drivers/artifacts.js';
import type { ConfineCode } from '../../drivers/confine.js';
import { tempDir } from '../support/temp.js';

const sha256 = (text: string) => 'sha256:' + createHash('sha256').update(text).digest('hex');

type Read = { ok: true; digest: string } | { ok: false; code: ConfineCode; detail: string } | { threw: string };

// Each read runs on a worker thread: a read that blocked in open() (a FIFO without a writer) would
// stop the main thread too, and with it the test runner's own timeout that is to catch it.
const READER = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.module).then(({ readArtifact }) => {
  const read = readArtifact(workerData.root, workerData.name, workerData.maxBytes);
  parentPort.postMessage(read.ok ? { ok: true, digest: read.value.digest } : read);
}).catch((error) => parentPort.postMessage({ threw: String(error) }));
`;

function readOnWorker(root: string, name: string, maxBytes: number): Promise<Read> {
  const module = new URL('../../drivers/confine.js', import.meta.url).href;
  const worker = new Worker(READER, { eval: true, workerData: { module, root, name, maxBytes } });
  return new Promise<Read>((resolve, reject) => {
    worker.once('message', (read: Read) => resolve(read));
    worker.once('error', reject);
  }).finally(() => worker.terminate());
}

/** Makes a device node with mknod(1); the reason it could not, else undefined. */
function mknod(path: string, type: 'c' | 'b', major: number, minor: number): string | undefined {
  try {
    execFileSync('mknod', [path, type, String(major), String(minor)], { stdio: 'pipe' });
    return undefined;
  } catch (error) {
    return `mknod ${type} failed (needs root with CAP_MKNOD): ${String((error as { stderr?: Buffer }).stderr ?? error).trim()}`;
  }
}

describe('readArtifact refuses what is not one regular file of the workspace', () => {
  const dir = tempDir('ordivon-confine-');
  const ws = join(dir, 'ws');
  let server: Server | undefined;
  const skipped: Record<string, string | undefined> = {};

  before(async () => {
    mkdirSync(ws);
    mkdirSync(join(dir, 'outside'));
    writeFileSync(join(dir, 'outside/secret.txt'), 'secret');
    writeFileSync(join(ws, 'report.json'), '{"ok":true}');
    linkSync(join(dir, 'outside/secret.txt'), join(ws, 'linked-in.json'));
    writeFileSync(join(ws, 'first-name.json'), '{"v":1}');
    linkSync(join(ws, 'first-name.json'), join(ws, 'second-name.json'));
    execFileSync('mkfifo', [join(ws, 'pipe.json')]);
    symlinkSync('pipe.json', join(ws, 'pipe-alias.json'));
    server = createServer();
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(join(ws, 'socket.json'), resolve);
    });
    skipped['char-device.json'] = mknod(join(ws, 'char-device.json'), 'c', 1, 3);
    skipped['block-device.json'] = mknod(join(ws, 'block-device.json'), 'b', 7, 0);
    mkdirSync(join(ws, 'a-dir'));
    symlinkSync('/dev/null', join(ws, 'dev-null.json'));
  });

  after(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    // Had a read blocked on the FIFO, a writer releases it, so the worker can end.
    try {
      closeSync(openSync(join(ws, 'pipe.json'), constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // ENXIO: no reader is waiting, as it should be.
    }
  });

  const cases: Array<{ name: string; code: ConfineCode; detail: RegExp }> = [
    { name: 'linked-in.json', code: 'artifact_hardlink', detail: /^linked-in\.json has 2 hard links/ },
    { name: 'second-name.json', code: 'artifact_hardlink', detail: /^second-name\.json has 2 hard links/ },
    { name: 'first-name.json', code: 'artifact_hardlink', detail: /^first-name\.json has 2 hard links/ },
    { name: 'pipe.json', code: 'not_a_file', detail: /^pipe\.json is a FIFO, not a regular file$/ },
    { name: 'pipe-alias.json', code: 'not_a_file', detail: /^pipe-alias\.json is a FIFO, not a regular file$/ },
    { name: 'socket.json', code: 'not_a_file', detail: /^socket\.json is a socket, not a regular file$/ },
    {
      name: 'char-device.json',
      code: 'not_a_file',
      detail: /^char-device\.json is a character device, not a regular file$/,
    },
    {
      name: 'block-device.json',
      code: 'not_a_file',
      detail: /^block-device\.json is a block device, not a regular file$/,
    },
    { name: 'a-dir', code: 'not_a_file', detail: /^a-dir is a directory, not a regular file$/ },
    { name: 'dev-null.json', code: 'symlink_escape', detail: /leads outside the workspace through a symlink$/ },
    { name: '../outside/secret.txt', code: 'path_escape', detail: /is outside the workspace$/ },
    { name: 'absent.json', code: 'artifact_missing', detail: /^absent\.json does not exist$/ },
  ];

  for (const c of cases) {
    // The timeout fails a read that hangs (the old reader blocked on a FIFO); it is no speed bound.
    it(`refuses ${c.name} with ${c.code}`, { timeout: 20_000 }, async (t) => {
      const reason = skipped[c.name];
      if (reason !== undefined) return t.skip(reason);
      const read = await readOnWorker(ws, c.name, 1 << 20);
      assert.ok(!('threw' in read), `${c.name} threw: ${'threw' in read ? read.threw : ''}`);
      assert.equal(read.ok, false, c.name);
      if (read.ok) return;
      assert.equal(read.code, c.code, read.detail);
      assert.match(read.detail, c.detail);
    });
  }

  it('still reads a regular file with one name, with the digest of its bytes', async () => {
    assert.deepEqual(await readOnWorker(ws, 'report.json', 1 << 20), { ok: true, digest: sha256('{"ok":true}') });
  });

  it("lists each refusal in a driver's receipt with its code, and the regular file as found", async () => {
    // On this thread: no FIFO here, so a regression cannot stop the runner (the cases above catch that).
    const names = ['report.json', 'linked-in.json', 'socket.json', 'char-device.json', 'absent.json'];
    const { artifacts, artifactRefusals } = collectArtifacts({
      cwd: ws,
      expectedArtifacts: names,
      maxArtifactBytes: 1 << 20,
    });
    assert.deepEqual(artifacts, [{ name: 'report.json', digest: sha256('{"ok":true}'), bytes: 11 }]);
    assert.deepEqual(artifactRefusals, [
      { name: 'linked-in.json', code: 'artifact_hardlink' },
      { name: 'socket.json', code: 'not_a_file' },
      ...(skipped['char-device.json'] === undefined ? [{ name: 'char-device.json', code: 'not_a_file' }] : []),
    ]);
  });
});
