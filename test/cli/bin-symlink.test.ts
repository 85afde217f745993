import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../support/temp.js';

const BIN = fileURLToPath(new URL('../../cli/ordivon.js', import.meta.url));
const VERSION = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

describe('the ordivon bin reached through a symlink, as npm installs it (node_modules/.bin, npx, npm link)', () => {
  it('prints its version and its help, not nothing', () => {
    const link = join(tempDir('ordivon-bin-'), 'ordivon');
    symlinkSync(BIN, link);
    const version = spawnSync(process.execPath, [link, '--version'], { encoding: 'utf8' });
    assert.equal(version.status, 0, version.stderr);
    assert.equal(version.stdout.trim(), VERSION);
    const help = spawnSync(process.execPath, [link, '--help'], { encoding: 'utf8' });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /ordivon/);
  });
});
