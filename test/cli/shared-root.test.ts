import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, readdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServe, type ServeChild } from '../service/serve-child.js';
import { canActAsNobody, readsAsNobody } from '../support/other-account.js';
import { tempDir } from '../support/temp.js';
import { treeSnapshot } from '../support/tree-snapshot.js';
import { CLI, lastError, ordivon, runFixture } from './run-fixture.js';

/** An operator DecisionRequest as docs/decision-requests.md opens one. */
const OPERATOR_REQUEST = {
  requestId: 'ship-1',
  pendingAction: 'ship it',
  participant: 'release-manager',
  alternatives: [
    { id: 'ship', summary: 'ship it now' },
    { id: 'hold', summary: 'hold' },
  ],
  allowed: ['ship', 'hold'],
  evidence: [],
  unresolvedClaims: [],
  consequence: 'it ships',
  reversibility: 'reversible',
  authority: 'release management',
  budgetImpact: 'none',
  revokedWhen: ['a new Assignment'],
  costOfDelay: 'none',
};

const RUN = ['run', '--spec', 'spec.json', '--stages', 'investigate=a,fix=b', '--state', 'state'];

/** `{path: mode}` under `root` (`.` the root), not descending into the Tasks' workspaces. */
function hostModes(root: string): Record<string, { mode: string; dir: boolean }> {
  const found: Record<string, { mode: string; dir: boolean }> = {};
  const walk = (path: string) => {
    const stat = lstatSync(path);
    const rel = relative(root, path) || '.';
    found[rel] = { mode: (stat.mode & 0o777).toString(8), dir: stat.isDirectory() };
    if (stat.isDirectory() && rel !== 'workspaces') for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(root);
  return found;
}

describe('the state root after a Task ran, seen from another local account', { timeout: 120_000 }, () => {
  const f = runFixture();
  let serve: ServeChild;
  before(async () => {
    f.configure('fix');
    const r = ordivon(f.dir, ...RUN, '--json');
    assert.equal(r.status, 0, r.stderr);
    // A service on the root, so service.json (with its token) is there too.
    serve = await startServe(['--state', f.state, '--port', '0', '--no-harnesses'], { ORDIVON_TOKEN: '' });
  });
  after(async () => {
    if (serve.child.exitCode === null) await serve.stop();
  });

  it('is 0700, and so is every directory the Host made in it; every file the Host wrote is 0600', () => {
    const found = hostModes(f.state);
    for (const path of [
      'format.json',
      'state.lock',
      'service.json',
      'lmdb/data.mdb',
      'lmdb/lock.mdb',
      'runtime/runtime.lmdb',
      'runtime/runtime.lmdb-lock',
    ])
      assert.ok(found[path], `${path} is there`);
    for (const path of ['.', 'lmdb', 'runtime', 'workspaces']) assert.equal(found[path]?.dir, true, path);
    for (const [path, { mode, dir }] of Object.entries(found))
      assert.equal(mode, dir ? '700' : '600', `${path} is ${mode}`);
  });

  it('keeps nobody from listing the root and from reading lmdb/data.mdb, service.json or a workspace', (t) => {
    if (!canActAsNobody(t)) return;
    // Only the root's own modes may stop nobody, not the test's temp directory around it.
    chmodSync(f.dir, 0o755);
    const workspace = join(f.state, 'workspaces', 'run-1', 'attempt-1');
    const targets = [
      { dir: f.state },
      join(f.state, 'lmdb', 'data.mdb'),
      join(f.state, 'service.json'),
      join(f.state, 'format.json'),
      { dir: workspace },
      join(workspace, 'report.md'),
    ];
    assert.deepEqual(readsAsNobody(targets), Array(targets.length).fill('EACCES'));
    // The files' own modes keep nobody out too, where the directories would let it through.
    try {
      for (const dir of [f.state, join(f.state, 'lmdb')]) chmodSync(dir, 0o711);
      assert.deepEqual(
        readsAsNobody([{ dir: f.state }, join(f.state, 'lmdb', 'data.mdb'), join(f.state, 'service.json')]),
        ['EACCES', 'EACCES', 'EACCES'],
      );
    } finally {
      for (const dir of [f.state, join(f.state, 'lmdb')]) chmodSync(dir, 0o700);
    }
  });
});

describe('a state root other local accounts may enter', { timeout: 120_000 }, () => {
  const dir = tempDir();
  const state = join(dir, 'state');
  const spec = join(dir, 'spec.json');
  const runSpec = join(dir, 'run-spec.json');
  const cli = (args: string[], env: NodeJS.ProcessEnv) => {
    const r = spawnSync(process.execPath, [CLI, ...args], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, ...env },
    });
    return { status: r.status, stderr: r.stderr, json: () => JSON.parse(r.stdout) };
  };
  before(() => {
    writeFileSync(
      spec,
      JSON.stringify({ title: 't', goal: 'g', requiredArtifacts: [{ name: 'a.json' }], taskId: 't-1' }),
    );
    const stages = [{ name: 's', instructions: 'write a.json', produces: ['a.json'], proposesCompletion: true }];
    writeFileSync(runSpec, JSON.stringify({ title: 't', goal: 'g', requiredArtifacts: [{ name: 'a.json' }], stages }));
    const harness = { driver: 'command', command: process.execPath, args: ['-e', '0'] };
    writeFileSync(join(dir, 'ordivon.config.json'), JSON.stringify({ harnesses: { h: harness } }));
    const created = ordivon(dir, 'task', 'create', '--spec', spec, '--state', state);
    assert.equal(created.status, 0, created.stderr);
    chmodSync(state, 0o755);
  });

  it('is refused state_root_shared (exit 2) by every command that opens it, naming its mode and the fix; nothing is written', () => {
    const before = treeSnapshot(state);
    const commands: string[][] = [
      ['list'],
      ['show', 't-1'],
      ['doctor'],
      ['send', 't-1', '{"type":"task.cancel","reason":"r"}'],
      ['decide', 't-1', 'r-1', '--answer', 'yes'],
      ['request', 'open', 't-1', JSON.stringify(OPERATOR_REQUEST)],
      ['task', 'create', '--spec', spec],
      ['run', '--spec', runSpec, '--stages', 's=h', '--config', 'ordivon.config.json'],
      ['diff', 't-1'],
      ['export', 't-1', '--to', join(dir, 'export')],
      ['evidence', 't-1', '--to', join(dir, 'evidence')],
      ['backup', join(dir, 'backup')],
      ['serve', '--no-harnesses', '--port', '0'],
      ['serve', '--config', 'ordivon.config.json', '--port', '0'],
    ];
    for (const command of commands) {
      const r = ordivon(dir, ...command, '--state', 'state', '--json');
      const what = command.join(' ');
      assert.equal(r.status, 2, `${what}: ${r.stderr}`);
      assert.equal(r.stdout, '', what);
      const error = lastError(r.stderr);
      assert.equal(error.code, 'state_root_shared', `${what}: ${r.stderr}`);
      assert.match(error.message, new RegExp(`${state} has mode 0755`), what);
      assert.match(error.message, new RegExp(`chmod 700 ${state}`), what);
      assert.equal(treeSnapshot(state), before, `${what} wrote nothing and changed no mode`);
    }
    assert.equal(existsSync(join(dir, 'backup')), false);
    assert.equal(existsSync(join(dir, 'export')), false);
    assert.equal(existsSync(join(dir, 'evidence')), false);
    const human = ordivon(dir, 'list', '--state', 'state');
    assert.equal(human.status, 2);
    assert.match(human.stderr, /^ordivon: state_root_shared: the state root .* has mode 0755: .*chmod 700 /);
  });

  it('opens with --allow-shared-root or ORDIVON_ALLOW_SHARED_ROOT=1, and its mode stays 0755', () => {
    const listed = ordivon(dir, 'list', '--state', 'state', '--allow-shared-root', '--json');
    assert.equal(listed.status, 0, listed.stderr);
    assert.deepEqual(
      (listed.json() as Array<{ taskId: string }>).map((t) => t.taskId),
      ['t-1'],
    );
    const sent = ordivon(
      dir,
      '--allow-shared-root',
      'send',
      't-1',
      '{"type":"task.cancel","reason":"r"}',
      '--state',
      'state',
    );
    assert.equal(sent.status, 0, sent.stderr);
    const shown = cli(['show', 't-1', '--state', 'state', '--json'], { ORDIVON_ALLOW_SHARED_ROOT: '1' });
    assert.equal(shown.status, 0, shown.stderr);
    assert.equal(shown.json().state, 'cancelled');
    assert.equal(lstatSync(state).mode & 0o777, 0o755);
    assert.equal(cli(['list', '--state', 'state'], { ORDIVON_ALLOW_SHARED_ROOT: '0' }).status, 2, 'only 1 opts in');
  });
});
