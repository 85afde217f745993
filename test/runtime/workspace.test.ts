import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { describe, it } from 'node:test';
import { confineError, createWorkspace, isRuntimeError, readArtifact, type ConfineCode } from '../../runtime/index.js';
import { sha256, tempRoot } from './support.js';

describe('createWorkspace', () => {
  it('creates an empty absolute directory per Task Attempt', async (t) => {
    const { dir } = tempRoot(t);
    const path = await createWorkspace({ root: join(dir, 'workspaces'), taskId: 'task-1', attempt: 2 });
    assert.ok(isAbsolute(path));
    assert.equal(path, join(dir, 'workspaces', 'task-1', 'attempt-2'));
    assert.deepEqual(readdirSync(path), []);
  });

  it('copies the seed repository, symlinks verbatim, and never re-seeds an existing workspace', async (t) => {
    const { dir } = tempRoot(t);
    const seed = join(dir, 'seed');
    mkdirSync(join(seed, 'src'), { recursive: true });
    writeFileSync(join(seed, 'src/lib.txt'), 'v1');
    symlinkSync('src/lib.txt', join(seed, 'lib-link'));
    const root = join(dir, 'workspaces');
    const path = await createWorkspace({ root, taskId: 'task-1', attempt: 1, seedFrom: seed });
    assert.equal(readFileSync(join(path, 'src/lib.txt'), 'utf8'), 'v1');
    assert.ok(lstatSync(join(path, 'lib-link')).isSymbolicLink());
    assert.equal(readlinkSync(join(path, 'lib-link')), 'src/lib.txt');

    writeFileSync(join(seed, 'src/lib.txt'), 'v2');
    assert.equal(await createWorkspace({ root, taskId: 'task-1', attempt: 1, seedFrom: seed }), path);
    assert.equal(readFileSync(join(path, 'src/lib.txt'), 'utf8'), 'v1');
    assert.deepEqual(readdirSync(join(root, 'task-1')), ['attempt-1'], 'no staging directory is left behind');
  });

  it('rejects a task id that could leave the root with invalid_options', async (t) => {
    const { dir } = tempRoot(t);
    for (const taskId of ['../escape', 'a/b', '.hidden', '']) {
      await assert.rejects(
        createWorkspace({ root: dir, taskId, attempt: 1 }),
        (error) =>
          isRuntimeError(error, 'invalid_options') && error.path === 'taskId' && error.message.includes('taskId'),
      );
    }
  });

  it('rejects a seed that is not a directory with workspace_missing', async (t) => {
    const { dir } = tempRoot(t);
    await assert.rejects(
      createWorkspace({ root: dir, taskId: 't', attempt: 1, seedFrom: join(dir, 'absent') }),
      (error) => isRuntimeError(error, 'workspace_missing'),
    );
  });
});

describe('reading artifacts through confine', () => {
  it('reads a file inside the workspace, also through an inside symlink', (t) => {
    const { ws } = tempRoot(t);
    writeFileSync(join(ws, 'diagnosis.json'), '{"ok":true}');
    symlinkSync('diagnosis.json', join(ws, 'alias.json'));
    for (const name of ['diagnosis.json', 'alias.json']) {
      const read = readArtifact(ws, name, 1024);
      assert.ok(read.ok, name);
      assert.equal(read.value.digest, sha256('{"ok":true}'));
    }
  });

  it('refuses each escape and bad artifact with its own code', (t) => {
    const { dir, ws } = tempRoot(t);
    mkdirSync(join(dir, 'outside'));
    writeFileSync(join(dir, 'outside/secret.txt'), 'secret');
    writeFileSync(join(dir, 'secret.txt'), 'secret');
    symlinkSync(join(dir, 'secret.txt'), join(ws, 'leak.json'));
    symlinkSync(join(dir, 'outside'), join(ws, 'linked-dir'));
    writeFileSync(join(ws, 'big.json'), 'x'.repeat(11));
    mkdirSync(join(ws, 'a-dir'));
    const cases: Array<[string, ConfineCode]> = [
      ['../secret.txt', 'path_escape'],
      [join(dir, 'secret.txt'), 'path_escape'],
      ['leak.json', 'symlink_escape'],
      ['linked-dir/secret.txt', 'symlink_escape'],
      ['missing.json', 'artifact_missing'],
      ['big.json', 'artifact_too_large'],
      ['a-dir', 'not_a_file'],
    ];
    for (const [name, code] of cases) {
      const read = readArtifact(ws, name, 10);
      assert.equal(read.ok, false, name);
      if (read.ok) continue;
      assert.equal(read.code, code, name);
      const error = confineError(read);
      assert.ok(isRuntimeError(error, code) && !error.retryable);
    }
  });
});
