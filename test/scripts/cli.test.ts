import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sha256 } from '../../store/index.js';
import { tempDir } from '../support/temp.js';
import { SPEC } from '../support/tasks.js';

const CLI = fileURLToPath(new URL('../../scripts/ordivon.js', import.meta.url));

function ordivon(...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, json: () => JSON.parse(r.stdout) };
}

/** Digest of every file under the state root except the lock: "nothing was written". */
function rootDigest(root: string): string {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((n) =>
      statSync(join(dir, n)).isDirectory()
        ? walk(join(dir, n))
        : n === 'state.lock' || n === 'lock.mdb'
          ? []
          : [join(dir, n)],
    );
  return sha256(
    walk(root)
      .sort()
      .map((f) => `${f}\n${sha256(readFileSync(f))}`)
      .join('\n'),
  );
}

describe('ordivon CLI', () => {
  const dir = tempDir();
  const state = join(dir, 'state');
  const spec = join(dir, 'spec.json');
  writeFileSync(spec, JSON.stringify({ ...SPEC, taskId: 'cli-task' }));

  it('creates a Task, admits an external event and shows it', () => {
    const created = ordivon('task', 'create', '--spec', spec, '--state', state, '--json');
    assert.equal(created.status, 0, created.stderr);
    assert.deepEqual(created.json(), { taskId: 'cli-task', revision: 1 });
    const sent = ordivon(
      'send',
      'cli-task',
      '{"type":"assignment.commit","harness":"codex","purpose":"diagnose"}',
      '--state',
      state,
      '--json',
    );
    assert.equal(sent.status, 0);
    assert.equal(sent.json().state, 'assigned.compiling');
    const shown = ordivon('show', 'cli-task', '--events', '--state', state, '--json').json();
    assert.deepEqual(
      [shown.revision, shown.state, shown.events.map((e: { type: string }) => e.type)],
      [2, 'assigned.compiling', ['task.created', 'assignment.commit']],
    );
    assert.deepEqual(ordivon('list', '--state', state, '--json').json(), [
      { taskId: 'cli-task', state: 'assigned.compiling', revision: 2, generation: 1 },
    ]);
  });

  it('exits 2 with the code and field path on malformed input and writes nothing', () => {
    const before = rootDigest(state);
    const bad = join(dir, 'bad-spec.json');
    writeFileSync(bad, JSON.stringify({ ...SPEC, requiredArtifacts: [{ name: 'x.json' }] }));
    const cases: Array<[string[], string, RegExp?]> = [
      [['send', 'cli-task', '{"type":"completion.propose","generation":0}'], 'invalid_event', /generation/],
      [['send', 'cli-task', '{not json'], 'invalid_json'],
      [['task', 'create', '--spec', bad], 'invalid_spec', /requiredArtifacts\.0\.schema/],
      [['task', 'create', '--spec', join(dir, 'missing.json')], 'spec_unreadable'],
      [['send', 'cli-task'], 'usage'],
      [['show', 'cli-task', '--bogus-flag'], 'usage'],
    ];
    for (const [args, code, detail] of cases) {
      const r = ordivon(...args, '--state', state, '--json');
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      const body = r.json();
      const got = body.error ?? body;
      assert.equal(got.code, code, args.join(' '));
      if (detail) assert.match(JSON.stringify(got), detail);
    }
    assert.equal(rootDigest(state), before);
  });

  it('--help after any command prints the usage and exits 0 without touching a state root', () => {
    for (const args of [
      ['demo', '--help'],
      ['doctor', '-h'],
      ['task', 'create', '--help'],
    ]) {
      const nowhere = join(dir, 'help-root');
      const r = ordivon(...args, '--state', nowhere);
      assert.equal(r.status, 0, args.join(' '));
      assert.match(r.stdout, /^ordivon — durable supervisor for agent work/);
      assert.match(r.stdout, /demo \[--acp-agent opencode\|hermes-like\] \[--only SCENARIO,\.\.\.\]/);
      assert.equal(existsSync(nowhere), false);
    }
  });

  it('exits 1 for a Host-only event from outside and writes nothing', () => {
    const before = rootDigest(state);
    const r = ordivon(
      'send',
      'cli-task',
      '{"type":"dispatch.ack","clientRequestId":"x","jobId":"y"}',
      '--state',
      state,
      '--json',
    );
    assert.equal(r.status, 1);
    assert.equal(r.json().code, 'not_allowed');
    assert.equal(rootDigest(state), before);
  });

  it('doctor exits 0 on a healthy root and 1 on a missing one', () => {
    const ok = ordivon('doctor', '--state', state, '--json');
    assert.equal(ok.status, 0);
    assert.deepEqual([ok.json().healthy, ok.json().tasks], [true, 1]);
    const missing = ordivon('doctor', '--state', join(dir, 'nowhere'), '--json');
    assert.equal(missing.status, 1);
    assert.equal(missing.json().error.code, 'state_missing');
  });
});
