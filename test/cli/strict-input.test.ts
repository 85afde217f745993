import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TaskSpec } from '../../objects/index.js';
import { tempDir } from '../support/temp.js';
import { ordivonSync } from '../support/cli-sync.js';
import { SPEC } from '../support/tasks.js';
import { CLI, runFixture } from './run-fixture.js';

const ordivon = (args: string[]) => ordivonSync(args);

/**
 * `ordivon ARGS` as this user without the capabilities that let root read any mode
 * (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH): as root, modes would mean nothing, and another account
 * (nobody) may not be able to enter the folder this clone lives in.
 */
function ordivonBoundByModes(args: string[]) {
  if (process.getuid?.() !== 0) return ordivonSync(args);
  const r = spawnSync('setpriv', ['--bounding-set=-dac_override,-dac_read_search', process.execPath, CLI, ...args], {
    encoding: 'utf8',
  });
  return { status: r.status, stderr: r.stderr, error: () => JSON.parse(r.stderr).error };
}

/** No stack trace, only the CLI's own answer. */
function noStack(text: string): void {
  assert.doesNotMatch(text, /^\s+at /m);
}

function specFile(dir: string, name: string, spec: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, typeof spec === 'string' ? spec : JSON.stringify(spec));
  return file;
}

describe('strict specs from the CLI', () => {
  const dir = tempDir();

  it('task create refuses a mistyped stage field (exit 2, stderr, the field it meant) and creates no state root', () => {
    const state = join(dir, 'typo-state');
    const spec = specFile(dir, 'typo.json', {
      ...SPEC,
      stages: [{ name: 'work', produces: ['diagnosis.json', 'completion.json'], proposeCompletion: true }],
    });
    const r = ordivon(['task', 'create', '--spec', spec, '--state', state]);
    assert.equal(r.status, 2, r.stdout);
    assert.equal(r.stdout, '');
    assert.match(
      r.stderr,
      /^ordivon: invalid_spec: task spec stages\.0\.proposeCompletion: unknown key "proposeCompletion" \(did you mean "proposesCompletion"\?\)$/m,
    );
    assert.equal(existsSync(state), false);
  });

  it('task create --json answers an unknown acceptance key on stdout with its path', () => {
    const state = join(dir, 'frozen-state');
    const spec = specFile(dir, 'frozen.json', { ...SPEC, acceptance: { command: 'true', frozenTest: ['t.js'] } });
    const r = ordivon(['task', 'create', '--spec', spec, '--state', state, '--json']);
    assert.equal(r.status, 2);
    assert.deepEqual(r.error(), {
      code: 'invalid_spec',
      path: 'acceptance.frozenTest',
      message: 'task spec acceptance.frozenTest: unknown key "frozenTest" (did you mean "frozenTests"?)',
    });
    assert.equal(existsSync(state), false);
  });

  it('task create reads a spec saved with a byte-order mark', () => {
    const state = join(dir, 'bom-state');
    const spec = specFile(dir, 'bom.json', `\uFEFF${JSON.stringify({ ...SPEC, taskId: 'bom-1' })}`);
    const r = ordivon(['task', 'create', '--spec', spec, '--state', state, '--json']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.json().taskId, 'bom-1');
  });

  it('task create refuses a spec that fails its schema without creating the state root', () => {
    const state = join(dir, 'invalid-state');
    const { title: _title, ...untitled } = SPEC;
    const r = ordivon(['task', 'create', '--spec', specFile(dir, 'untitled.json', untitled), '--state', state]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^ordivon: invalid_spec: task spec title: /m);
    assert.equal(existsSync(state), false);
  });

  it('task create refuses a spec file over 1 MiB before reading it, naming the limit', () => {
    const state = join(dir, 'big-state');
    const filler = Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`extra${i}`, 'x'.repeat(30)]));
    const spec = specFile(dir, 'big.json', { ...SPEC, labels: filler });
    const r = ordivon(['task', 'create', '--spec', spec, '--state', state, '--json']);
    assert.equal(r.status, 2);
    const error = r.error();
    assert.equal(error.code, 'invalid_spec');
    assert.equal(error.path, '--spec');
    assert.match(error.message, /at most 1048576 \(1 MiB\)/);
    assert.equal(existsSync(state), false);
  });

  it('help lists the spec fields the schema parses', () => {
    for (const args of [
      ['task', 'create', '--help'],
      ['run', '--help'],
    ]) {
      const r = ordivon(args);
      assert.equal(r.status, 0, r.stderr);
      assert.ok(r.stdout.includes(`The spec's fields: ${Object.keys(TaskSpec.shape).join(', ')};`), r.stdout);
    }
  });

  it('send refuses an event with an unknown key (exit 2, invalid_event at the key) and writes nothing', () => {
    const state = join(dir, 'send-state');
    const spec = specFile(dir, 'ok.json', { ...SPEC, taskId: 'strict-send' });
    assert.equal(ordivon(['task', 'create', '--spec', spec, '--state', state]).status, 0);
    const r = ordivon(['send', 'strict-send', '{"type":"task.cancel","reson":"typo"}', '--state', state, '--json']);
    assert.equal(r.status, 2, r.stderr);
    assert.equal(r.stdout, '');
    const answer = r.error();
    assert.deepEqual([answer.code, answer.path, answer.written, answer.revision], ['invalid_event', 'reson', false, 1]);
    assert.equal(answer.message, 'unknown key "reson" (did you mean "reason"?)');
    const shown = ordivon(['show', 'strict-send', '--state', state, '--json']).json();
    assert.deepEqual([shown.revision, shown.state], [1, 'open']);
  });
});

describe('nothing written on a wrong state root', () => {
  const dir = tempDir();

  for (const args of [
    ['send', 'task-1', '{"type":"task.cancel","reason":"x"}'],
    ['decide', 'task-1', 'req-1', '--answer', 'yes'],
    ['show', 'task-1'],
  ]) {
    it(`${args[0]} on a missing state root is state_missing (exit 1) and creates none`, () => {
      const state = join(dir, `missing-${args[0]}`);
      const r = ordivon([...args, '--state', state]);
      assert.equal(r.status, 1, r.stdout);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /^ordivon: state_missing: /m);
      assert.equal(existsSync(state), false);
      const json = ordivon([...args, '--state', state, '--json']);
      assert.equal(json.status, 1);
      assert.equal(json.error().code, 'state_missing');
      assert.equal(existsSync(state), false);
    });
  }

  it('a state root that is a file is state_not_directory for every command, with no stack', () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, 'not a state root\n');
    const spec = specFile(dir, 'spec.json', SPEC);
    for (const args of [
      ['show', 'task-1'],
      ['list'],
      ['send', 'task-1', '{"type":"task.cancel","reason":"x"}'],
      ['decide', 'task-1', 'req-1', '--answer', 'yes'],
      ['task', 'create', '--spec', spec],
    ]) {
      const r = ordivon([...args, '--state', file, '--json']);
      assert.equal(r.status, 1, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.error().code, 'state_not_directory', args.join(' '));
      noStack(r.stderr);
    }
  });

  it('run --state <a file> --json answers state_not_directory on stdout, with no stack', () => {
    const fixture = runFixture();
    fixture.configure('fix');
    const file = join(fixture.dir, 'state-file');
    writeFileSync(file, '');
    const r = spawnSync(
      process.execPath,
      [CLI, 'run', '--spec', fixture.spec, '--stages', 'investigate=a,fix=b', '--state', file, '--json'],
      { cwd: fixture.dir, encoding: 'utf8' },
    );
    assert.equal(r.status, 1, r.stderr);
    assert.equal(JSON.parse(r.stderr).error.code, 'state_not_directory');
    noStack(r.stderr);
  });

  it('a state root this process cannot read is state_unreadable', () => {
    const parent = join(dir, 'locked');
    const state = join(parent, 'state');
    mkdirSync(state, { recursive: true });
    chmodSync(state, 0o000);
    try {
      const r = ordivonBoundByModes(['show', 'task-1', '--state', state, '--json']);
      assert.equal(r.status, 1, r.stderr);
      assert.equal(r.error().code, 'state_unreadable');
      noStack(r.stderr);
    } finally {
      chmodSync(state, 0o700);
    }
  });
});
