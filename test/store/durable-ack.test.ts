import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { open } from 'lmdb';
import { tempDir } from '../support/temp.js';

const WRITER = fileURLToPath(new URL('../fixtures/store/append-then-die.js', import.meta.url));

/**
 * The keys of the events database as LMDB recovers them after a power loss: `safeRestore`
 * opens the last flushed snapshot, never a commit that was only visible.
 */
async function flushedEventKeys(root: string): Promise<Set<string>> {
  // `safeRestore` is an lmdb-js option its type declarations do not list.
  const env = open({ path: join(root, 'lmdb'), maxDbs: 16, ...{ safeRestore: true } });
  try {
    const events = env.openDB<unknown, [string, number]>('events', { encoding: 'binary' });
    const keys = new Set<string>();
    for (const key of events.getKeys()) if (Array.isArray(key)) keys.add(`${key[0]} ${key[1]}`);
    return keys;
  } finally {
    await env.close();
  }
}

describe('an acknowledged append', () => {
  it('is in the last flushed snapshot when its promise resolves, with many Tasks appending at once', async () => {
    for (const [acks, tasks] of [
      [1, 1],
      [40, 1],
      [300, 64],
    ] as const) {
      const root = join(tempDir(), 'root');
      const child = spawnSync(process.execPath, [WRITER, root, String(acks), String(tasks)], { encoding: 'utf8' });
      assert.equal(child.signal, 'SIGKILL', child.stderr);
      const acked = child.stdout
        .split('\n')
        .filter((line) => line.startsWith('ack '))
        .map((line) => line.slice(4));
      assert.equal(acked.length, acks);
      const flushed = await flushedEventKeys(root);
      const lost = acked.filter((key) => !flushed.has(key));
      assert.deepEqual(lost, [], `acknowledged but not flushed (${acks} acks over ${tasks} Tasks)`);
    }
  });
});
