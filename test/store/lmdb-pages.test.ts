import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { checkLmdbPages, type PagesCheck } from '../../store/index.js';
import { tempDir } from '../support/temp.js';

const PROJECT = fileURLToPath(new URL('../../../', import.meta.url));

// A writer that commits puts and removes of values from 0 to 6 kB (overflow pages freed and
// reused) until its stdin closes, printing a line once its first commit is durable.
const WRITER = `
import { open } from 'lmdb';
const env = open({ path: process.argv[1], maxDbs: 4 });
const db = env.openDB('events', {});
let stop = false;
process.stdin.on('end', () => (stop = true)).resume();
for (let i = 0; !stop; i += 20) {
  const batch = [];
  for (let k = i; k < i + 20; k++) batch.push(db.put('k' + (k % 3000), 'x'.repeat((k * 37) % 6000)));
  batch.push(db.remove('k' + ((i * 7) % 3000)));
  await Promise.all(batch);
  if (i === 0) console.log('committed');
}
await env.close();
`;

describe('checkLmdbPages beside a live writer', () => {
  it('never reports damage while another process commits throughout the walk', async () => {
    const dir = join(tempDir(), 'env');
    const writer = spawn(process.execPath, ['--input-type=module', '-e', WRITER, dir], {
      cwd: PROJECT,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const [line] = (await once(writer.stdout.setEncoding('utf8'), 'data')) as [string];
    assert.match(line, /committed/);
    const seen: Record<PagesCheck['kind'], number> = { sound: 0, short: 0, damaged: 0, unsettled: 0 };
    const damaged: PagesCheck[] = [];
    for (let i = 0; i < 150; i++) {
      const check = checkLmdbPages(join(dir, 'data.mdb'));
      seen[check.kind]++;
      if (check.kind === 'damaged' || check.kind === 'short') damaged.push(check);
    }
    writer.stdin.end();
    const [status] = (await once(writer, 'exit')) as [number | null];
    assert.equal(status, 0);
    assert.deepEqual(damaged, []);
    assert.ok(seen.sound > 0, JSON.stringify(seen));
    // After the writer stopped, the file is whole and sound.
    assert.equal(checkLmdbPages(join(dir, 'data.mdb')).kind, 'sound');
  });
});
