import assert from 'node:assert/strict';
import { chmodSync, lstatSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EventStore, copyEnvironment, type OpenOptions } from '../../store/index.js';
import { NOTE_KINDS, appendInput, storeCode } from '../support/store-backends.js';
import { tempDir } from '../support/temp.js';
import { treeSnapshot } from '../support/tree-snapshot.js';

/** `{path: mode}` of the root and everything under it, `.` the root itself. */
function modes(root: string): Record<string, string> {
  const found: Record<string, string> = {};
  const walk = (path: string) => {
    const stat = lstatSync(path);
    found[relative(root, path) || '.'] = (stat.mode & 0o777).toString(8);
    if (stat.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(root);
  return found;
}

const open = (root: string, more: Partial<OpenOptions> = {}) => EventStore.open({ root, kinds: NOTE_KINDS, ...more });

/** A root holding one Task's events, closed. */
async function seeded(root: string): Promise<void> {
  const store = open(root);
  await store.append(appendInput('t1', 0, 'e1'));
  await store.close();
}

/** Runs `fn` under umask 000, where a file made without a mode would be 0666 and a directory 0777. */
async function underUmask000<T>(fn: () => Promise<T>): Promise<T> {
  const before = process.umask(0);
  try {
    return await fn();
  } finally {
    process.umask(before);
  }
}

describe('a state root other local accounts cannot read', () => {
  const env = process.env.ORDIVON_ALLOW_SHARED_ROOT;
  before(() => delete process.env.ORDIVON_ALLOW_SHARED_ROOT);
  after(() => {
    if (env !== undefined) process.env.ORDIVON_ALLOW_SHARED_ROOT = env;
  });

  it('creates the root 0700 and every file in it 0600 (LMDB, format.json, the lock, the journal), under umask 000 too', async () => {
    const root = join(tempDir(), 'state');
    await underUmask000(async () => {
      const store = open(root, { journal: { segmentBytes: 1 << 16 } });
      await store.append(appendInput('t1', 0, 'e1'));
      const held = modes(root);
      assert.equal(held['state.lock'], '600', 'the lock, while held');
      await store.close();
    });
    const found = modes(root);
    assert.deepEqual(
      Object.keys(found)
        .filter((p) => p !== '.' && !p.startsWith('journal/'))
        .sort(),
      ['format.json', 'journal', 'lmdb', 'lmdb/data.mdb', 'lmdb/lock.mdb', 'workspaces'],
    );
    for (const [path, mode] of Object.entries(found)) {
      const dir = statSync(join(root, path)).isDirectory();
      assert.equal(mode, dir ? '700' : '600', `${path} is ${mode}`);
    }
    assert.ok(
      Object.keys(found).some((p) => p.startsWith('journal/')),
      'the journal wrote a segment',
    );
  });

  it('refuses a root whose mode lets other accounts in with state_root_shared, writable or read-only, and writes nothing', async () => {
    const root = join(tempDir(), 'state');
    await seeded(root);
    for (const mode of [0o755, 0o750, 0o701, 0o770]) {
      chmodSync(root, mode);
      const before = treeSnapshot(root);
      for (const readOnly of [false, true]) {
        assert.throws(
          () => open(root, { readOnly }),
          (e: Error) => {
            assert.equal(storeCode(e), 'state_root_shared');
            const shown = `0${mode.toString(8)}`;
            assert.match(e.message, new RegExp(`${root} has mode ${shown}`));
            assert.match(e.message, new RegExp(`chmod 700 ${root}`));
            assert.match(e.message, /--allow-shared-root/);
            return true;
          },
          `mode ${mode.toString(8)}, readOnly ${readOnly}`,
        );
      }
      assert.equal(treeSnapshot(root), before, `mode ${mode.toString(8)}: nothing written, no mode changed`);
    }
  });

  it('opens a shared root with allowSharedRoot or ORDIVON_ALLOW_SHARED_ROOT=1, changing no mode in it', async () => {
    const root = join(tempDir(), 'state');
    await seeded(root);
    chmodSync(root, 0o755);
    chmodSync(join(root, 'format.json'), 0o644);
    const store = open(root, { allowSharedRoot: true });
    await store.append(appendInput('t1', 1, 'e2'));
    await store.close();
    assert.equal(statSync(root).mode & 0o777, 0o755);
    assert.equal(statSync(join(root, 'format.json')).mode & 0o777, 0o644);
    process.env.ORDIVON_ALLOW_SHARED_ROOT = '1';
    try {
      const reader = open(root, { readOnly: true });
      assert.equal(reader.head('t1')?.revision, 2);
      await reader.close();
    } finally {
      delete process.env.ORDIVON_ALLOW_SHARED_ROOT;
    }
    assert.throws(
      () => open(root, { allowSharedRoot: false }),
      (e) => storeCode(e) === 'state_root_shared',
    );
  });

  it("makes a private root's files private again at a writable open (a root an older build wrote: 0644 files)", async () => {
    const root = join(tempDir(), 'state');
    await seeded(root);
    mkdirSync(join(root, 'runtime'), { mode: 0o755 });
    writeFileSync(join(root, 'runtime', 'runtime.lmdb'), '', { mode: 0o644 });
    for (const path of ['format.json', 'lmdb/data.mdb', 'lmdb/lock.mdb']) chmodSync(join(root, path), 0o644);
    for (const path of ['lmdb', 'workspaces']) chmodSync(join(root, path), 0o755);
    const store = open(root);
    await store.close();
    const found = modes(root);
    for (const path of ['format.json', 'lmdb/data.mdb', 'lmdb/lock.mdb', 'runtime/runtime.lmdb'])
      assert.equal(found[path], '600', path);
    for (const path of ['.', 'lmdb', 'runtime', 'workspaces']) assert.equal(found[path], '700', path);
  });

  it('makes a new root in an existing directory 0700, unless it holds what a state root does not', async () => {
    const empty = join(tempDir(), 'made-by-hand');
    mkdirSync(empty, { mode: 0o755 });
    chmodSync(empty, 0o755);
    await seeded(empty);
    assert.equal(statSync(empty).mode & 0o777, 0o700, 'an empty directory becomes the root, 0700');

    const foreign = join(tempDir(), 'home');
    mkdirSync(foreign);
    chmodSync(foreign, 0o755);
    writeFileSync(join(foreign, 'notes.txt'), 'mine');
    const before = treeSnapshot(foreign);
    assert.throws(
      () => open(foreign),
      (e: Error) =>
        storeCode(e) === 'state_root_shared' && /holds files an Ordivon state root does not/.test(e.message),
    );
    assert.equal(treeSnapshot(foreign), before, 'not made a root, no mode changed');
  });

  it('copies an LMDB environment (backup) as a 0600 file in a 0700 directory', async () => {
    const root = join(tempDir(), 'state');
    await seeded(root);
    const copy = join(tempDir(), 'copy', 'lmdb');
    await underUmask000(() => copyEnvironment(join(root, 'lmdb'), copy));
    assert.equal(statSync(copy).mode & 0o777, 0o700);
    assert.equal(statSync(join(copy, 'data.mdb')).mode & 0o777, 0o600);
  });
});
