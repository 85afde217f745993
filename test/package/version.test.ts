import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CLI, http, startServe } from '../service/serve-child.js';
import { tempDir } from '../support/temp.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

describe("the package's version, as the CLI and the service report it", { timeout: 60_000 }, () => {
  it('ordivon --version prints it and writes nothing', () => {
    const state = join(tempDir(), 'never');
    const r = spawnSync(process.execPath, [CLI, '--version', '--state', state], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), VERSION);
    assert.equal(spawnSync('test', ['-e', state]).status, 1, 'no state root made');
  });

  it("serve's --json ready line and GET /status carry it", async () => {
    const dir = tempDir();
    const serve = await startServe([
      '--state',
      join(dir, 'state'),
      '--socket',
      join(dir, 'ordivon.sock'),
      '--no-harnesses',
    ]);
    try {
      assert.equal((serve.ready as { version?: string }).version, VERSION);
      const status = await http(serve.ready, 'GET', '/status');
      assert.equal(status.status, 200, status.text);
      assert.equal(status.body.version, VERSION);
    } finally {
      assert.equal((await serve.stop()).code, 0);
    }
  });
});
