import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { main, ordivonProgram } from '../../cli/ordivon.js';
import { sha256 } from '../../store/index.js';
import { tempDir } from '../support/temp.js';
import { ordivonSync } from '../support/cli-sync.js';
import { SPEC } from '../support/tasks.js';

const ordivon = (...args: string[]) => ordivonSync(args);

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
    writeFileSync(
      bad,
      JSON.stringify({ ...SPEC, requiredArtifacts: [{ name: 'x.json', schema: { type: 'objekt' } }] }),
    );
    const cases: Array<[string[], string, RegExp?]> = [
      [['send', 'cli-task', '{"type":"completion.propose","generation":0}'], 'invalid_event', /generation/],
      [['send', 'cli-task', '{not json'], 'invalid_json'],
      [['send', 'cli-task', '{"type":"goal.revise","goal":""}'], 'invalid_event', /"path":"goal"/],
      [
        ['send', 'cli-task', '{"type":"decision.submit","contextDigest":"sha256:nope","candidateId":"x"}'],
        'invalid_event',
        /"path":"contextDigest"/,
      ],
      [['task', 'create', '--spec', bad], 'invalid_spec', /requiredArtifacts\.0\.schema/],
      [['task', 'create', '--spec', join(dir, 'missing.json')], 'spec_unreadable'],
      [['send', 'cli-task'], 'usage'],
      [['show', 'cli-task', '--bogus-flag'], 'usage'],
    ];
    for (const [args, code, detail] of cases) {
      const r = ordivon(...args, '--state', state, '--json');
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.equal(r.stdout, '', `${args.join(' ')}: nothing on stdout`);
      const got = r.error();
      assert.equal(got.code, code, args.join(' '));
      if (detail) assert.match(JSON.stringify(got), detail);
      if (code === 'invalid_spec') assert.equal(got.path, 'requiredArtifacts.0.schema', 'the field, as a field');
    }
    assert.equal(rootDigest(state), before);
  });

  it("--help after any command prints that command's usage and exits 0 without touching a state root", () => {
    for (const [args, synopsis] of [
      [
        ['demo', '--help'],
        /^usage: ordivon demo \[--acp-agent opencode\|hermes-like\]\n\s+\[--workload hamilton\|round1\|world-w1\|loop-compare\|branch-join\]\n\s+\[--only SCENARIO,\.\.\.\]/,
      ],
      [['doctor', '-h'], /^usage: ordivon doctor \[--full\] \[--state DIR\] \[--json\]\n/],
      [['task', 'create', '--help'], /^usage: ordivon task create --spec FILE \[--state DIR\] \[--json\]\n/],
      [['help', 'task', 'create'], /^usage: ordivon task create --spec FILE/],
    ] as const) {
      const nowhere = join(dir, 'help-root');
      const r = ordivon(...args, '--state', nowhere);
      assert.equal(r.status, 0, args.join(' '));
      assert.match(r.stdout, synopsis, args.join(' '));
      assert.equal(r.stderr, '');
      assert.equal(existsSync(nowhere), false);
    }
    for (const args of [['--help'], ['-h'], ['help']]) {
      const r = ordivon(...args);
      assert.equal(r.status, 0, args.join(' '));
      assert.match(r.stdout, /^ordivon — durable supervisor for agent work/);
      assert.match(
        r.stdout,
        /\n  demo \[--acp-agent opencode\|hermes-like\]\n\s+\[--workload hamilton\|round1\|world-w1\|loop-compare\|branch-join\] \[--only SCENARIO,\.\.\.\]\n\s+\[--fresh\]\n/,
      );
      assert.match(r.stdout, /\n  send TASK_ID EVENT_JSON \[--event-id ID\]\n/);
    }
  });

  it('takes the global flags anywhere: ordivon --state DIR list answers as ordivon list --state DIR', () => {
    const after = ordivon('list', '--state', state, '--json');
    assert.equal(after.status, 0, after.stderr);
    assert.deepEqual(after.json(), [{ taskId: 'cli-task', state: 'assigned.compiling', revision: 2, generation: 1 }]);
    for (const args of [
      ['--state', state, 'list', '--json'],
      ['--state', state, '--json', 'list'],
      ['--json', 'list', `--state=${state}`],
    ]) {
      const r = ordivon(...args);
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.deepEqual(r.json(), after.json(), args.join(' '));
    }
    const text = ordivon('list', '--state', state);
    assert.equal(text.status, 0);
    assert.equal(
      text.stdout,
      'TASK      STATE               REVISION  GENERATION\ncli-task  assigned.compiling  2         1\n',
    );
    assert.equal(ordivon('--state', state, 'list').stdout, text.stdout);
    const shown = ordivon('--state', state, 'show', '--json', 'cli-task').json();
    assert.deepEqual([shown.taskId, shown.revision], ['cli-task', 2]);
  });

  it('send --help prints the send usage (every argument and flag with a line), exits 0 and writes nothing', () => {
    const before = rootDigest(state);
    const r = ordivon('send', '--help', '--state', state);
    assert.equal(r.status, 0);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, /^usage: ordivon send TASK_ID EVENT_JSON \[--event-id ID\] \[--state DIR\] \[--json\]\n/);
    for (const line of [
      /\n  TASK_ID +\S/,
      /\n  EVENT_JSON +\S/,
      /\n  --event-id ID +idempotency key/,
      /\n  --state DIR +\S/,
    ]) {
      assert.match(r.stdout, line);
    }
    assert.equal(ordivon('help', 'send').stdout, r.stdout, 'ordivon help send is the same text');
    assert.equal(ordivon('--json', 'send', 'cli-task', '{}', '-h').stdout, r.stdout, '--help wins over the rest');
    assert.equal(rootDigest(state), before);
  });

  it('an unknown flag is usage (exit 2) naming the flag and the command, before or after the command; nothing written', () => {
    const before = rootDigest(state);
    for (const args of [
      ['list', '--bogus'],
      ['--bogus', 'list'],
    ]) {
      const json = ordivon(...args, '--state', state, '--json');
      assert.equal(json.status, 2, args.join(' '));
      assert.equal(json.stdout, '');
      assert.deepEqual(JSON.parse(json.stderr), {
        error: { code: 'usage', message: 'unknown flag --bogus for "list"' },
      });
      const text = ordivon(...args, '--state', state);
      assert.equal(text.status, 2);
      assert.equal(text.stdout, '');
      assert.match(
        text.stderr,
        /^ordivon: usage: unknown flag --bogus for "list"\nusage: ordivon list \[--state DIR\] \[--json\]\n/,
      );
    }
    const other = ordivon('show', 'cli-task', '--full', '--state', state, '--json');
    assert.equal(other.status, 2, "another command's flag is unknown here");
    assert.equal(other.error().message, 'unknown flag --full for "show"');
    const unknown = ordivon('--state', state, 'lsit', '--json');
    assert.equal(unknown.status, 2);
    assert.deepEqual(JSON.parse(unknown.stderr), { error: { code: 'usage', message: 'unknown command "lsit"' } });
    assert.equal(rootDigest(state), before);
  });

  it('a bad value is usage (exit 2) naming the flag (JSON: its path), before any state root is opened', () => {
    const nowhere = join(dir, 'bad-value-root');
    const cases: Array<[string[], string]> = [
      [['serve', '--port', '70000'], '--port: must be an integer 0-65535'],
      [['serve', '--port=x'], '--port: must be an integer 0-65535'],
      [['serve', '--acp-agent', 'claude'], '--acp-agent: must be opencode or hermes-like'],
      [['graph', '--format', 'svg'], '--format: must be mermaid, dot or json'],
      [['send', 'cli-task', '{}', '--event-id='], '--event-id: must not be empty'],
      [['send', 'cli-task', '{}', '--event-id', '--fresh'], '--event-id: needs a value; got the flag --fresh'],
      [['doctor', '--full=yes'], '--full: takes no value'],
      [['task', 'create'], '--spec: required'],
    ];
    for (const [args, message] of cases) {
      const json = ordivon(...args, '--state', nowhere, '--json');
      assert.equal(json.status, 2, `${args.join(' ')}: ${json.stdout}${json.stderr}`);
      const error = json.error();
      assert.equal(error.code, 'usage', args.join(' '));
      assert.ok(error.message.startsWith(message), `${args.join(' ')}: ${error.message}`);
      assert.equal(error.path, message.slice(0, message.indexOf(':')));
      const text = ordivon(...args, '--state', nowhere);
      assert.equal(text.status, 2);
      assert.ok(text.stderr.startsWith(`ordivon: usage: ${message}`), text.stderr);
      assert.equal(existsSync(nowhere), false);
    }
    const missing = ordivon('send', 'cli-task', '--state', nowhere, '--json');
    assert.deepEqual([missing.status, missing.error().message], [2, 'missing EVENT_JSON for "send"']);
  });

  it('help comes from the table: the --help of each command lists every argument and flag of its definition', async () => {
    const help = async (argv: string[]) => {
      let out = '';
      const code = await main(argv, { json: false, out: (t) => (out += t), err: (t) => (out += t) });
      return { code, out };
    };
    const overall = await help(['--help']);
    for (const cmd of (await ordivonProgram()).commands) {
      assert.ok(overall.out.includes(`\n  ${cmd.name}`) && overall.out.includes(cmd.summary), cmd.name);
      const r = await help([...cmd.name.split(' '), '--help']);
      assert.equal(r.code, 0, cmd.name);
      assert.ok(r.out.startsWith(`usage: ordivon ${cmd.name}`), r.out);
      for (const p of Object.values(cmd.positionals ?? {}))
        assert.ok(r.out.includes(`  ${p.name}  `) && r.out.includes(p.description), `${cmd.name} ${p.name}`);
      for (const [name, flag] of Object.entries(cmd.flags ?? {}))
        if (flag.internal) assert.ok(!r.out.includes(`--${name} `), `${cmd.name} --${name} is internal: not shown`);
        else assert.ok(r.out.includes(`  --${name}`) && r.out.includes(flag.description), `${cmd.name} --${name}`);
    }
  });

  it('a group word lists its subcommands: ordivon task --help exits 0, ordivon task and task bogus exit 2', () => {
    const help = ordivon('task', '--help');
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /^usage: ordivon task <subcommand>/);
    assert.match(help.stdout, /^  task create --spec FILE$/m);
    for (const argv of [['task'], ['task', 'bogus']]) {
      const r = ordivon(...argv);
      assert.equal(r.status, 2, argv.join(' '));
      assert.match(r.stderr, /^ordivon: usage: /);
      assert.match(r.stderr, /^  task create --spec FILE$/m, 'the subcommands are listed');
      assert.doesNotMatch(r.stderr, /unknown command "task"$/m);
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
    assert.equal(r.stdout, '');
    assert.deepEqual(r.error(), {
      code: 'not_allowed',
      message: r.error().message,
      taskId: 'cli-task',
      state: 'assigned.compiling',
      revision: 2,
      written: false,
    });
    assert.equal(rootDigest(state), before);
  });

  it('doctor exits 0 on a healthy root and 1 on a missing one', () => {
    const ok = ordivon('doctor', '--state', state, '--json');
    assert.equal(ok.status, 0);
    assert.deepEqual([ok.json().healthy, ok.json().tasks], [true, 1]);
    const missing = ordivon('doctor', '--state', join(dir, 'nowhere'), '--json');
    assert.equal(missing.status, 1);
    assert.equal(missing.error().code, 'state_missing');
  });
});
