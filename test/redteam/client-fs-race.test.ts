import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readWorkspaceText, writeWorkspaceText, type FsRefusal } from '../../drivers/acp/workspace-fs.js';
import { findExecutable, optionalPart } from '../support/optional-part.js';
import { tempDir } from '../support/temp.js';

// The Host serves an ACP agent's fs/write_text_file and fs/read_text_file itself, outside any
// sandbox (as root here), confined to the workspace by a check of the path before the file is
// opened. What an agent in its sandbox can do against that: a process of its own (the swapper)
// exchanges a folder of the workspace with a symlink to a path outside, atomically and without
// pause, while the agent asks for files under that folder. opencode reads files itself, so only the
// write race is driven through a real agent (attacks.ts, 05b); here both requests are made as the
// ACP driver makes them, many times, against a real swapper process.

const RENAMEAT2: Record<string, number> = { x64: 316, arm64: 276 };
const PERL = optionalPart(
  'perl',
  RENAMEAT2[process.arch] !== undefined ? findExecutable(['perl']) : undefined,
  `perl (with renameat2 on ${process.arch}) makes the swapper: apt-get install perl`,
);
const TRIES = 2_000;

/** Exchanges `<workspace>/d` (a folder) and `<workspace>/s` (a symlink to `outside`) until killed. */
function startSwapper(workspace: string, outside: string): ChildProcess {
  mkdirSync(join(workspace, 'd'));
  symlinkSync(outside, join(workspace, 's'));
  const loop = `chdir($ARGV[0]) or die; my $a = "d"; my $b = "s"; while (1) { syscall(${RENAMEAT2[process.arch]}, -100, $a, -100, $b, 2) }`;
  return spawn(PERL.need(), ['-e', loop, workspace], { stdio: 'ignore' });
}

describe('the Host’s ACP client file system, raced by a symlink swap in the workspace', { skip: PERL.skip }, () => {
  let root: string;
  let swapper: ChildProcess | undefined;
  before(() => {
    root = tempDir('ordivon-redteam-client-fs-');
  });
  after(() => {
    swapper?.kill('SIGKILL');
  });

  it(`fs/write_text_file: none of ${TRIES} writes under the swapped folder lands outside the workspace`, async () => {
    const workspace = join(root, 'write-ws');
    const seed = join(root, 'write-seed');
    mkdirSync(workspace);
    mkdirSync(seed);
    swapper = startSwapper(workspace, seed);
    const refusals: FsRefusal[] = [];
    try {
      for (let i = 0; i < TRIES; i++)
        await writeWorkspaceText(
          workspace,
          { path: join(workspace, 'd', `planted-${i}.txt`), content: 'planted\n' },
          refusals,
        ).catch(() => undefined);
    } finally {
      swapper.kill('SIGKILL');
    }
    assert.ok(refusals.length > 0, 'the swap was seen (some writes were refused symlink_escape)');
    assert.deepEqual(readdirSync(seed), [], 'the Host wrote these outside the workspace');
  });

  it(`fs/read_text_file: none of ${TRIES} reads under the swapped folder returns a file outside the workspace`, async () => {
    const workspace = join(root, 'read-ws');
    const state = join(root, 'read-state');
    mkdirSync(workspace);
    mkdirSync(state);
    writeFileSync(join(state, 'service.json'), '{"token":"the-secret-token"}\n');
    swapper = startSwapper(workspace, state);
    const refusals: FsRefusal[] = [];
    let leaked = 0;
    try {
      for (let i = 0; i < TRIES; i++) {
        const text = await readWorkspaceText(workspace, { path: join(workspace, 'd', 'service.json') }, refusals).catch(
          () => '',
        );
        if (text.includes('the-secret-token')) leaked++;
      }
    } finally {
      swapper.kill('SIGKILL');
    }
    assert.ok(refusals.length > 0, 'the swap was seen (some reads were refused symlink_escape)');
    assert.equal(leaked, 0, `the Host read service.json for the agent ${leaked} times`);
  });
});
