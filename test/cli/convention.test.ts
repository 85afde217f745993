import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { createSupervisor } from '../../kernel/supervisor.js';
import { operatorRequest } from '../support/decision-requests.js';
import { SPEC } from '../support/tasks.js';
import { CLI, runFixture, seedRepo } from './run-fixture.js';

/**
 * docs/cli.md's convention, command by command, in real child processes on one state root:
 * results on stdout, errors and refusals on stderr (stdout empty), exit 0 / 1 / 2, and with
 * `--json` one error document `{"error": {code, message, path?, …}}`. Each row runs twice, with
 * and without `--json`; `args(json)` may name another target the second time where the good
 * input changes the state (a Task cancelled once cannot be cancelled again).
 */
interface Row {
  name: string;
  args: (json: boolean) => string[];
  exit: 0 | 1 | 2;
  /** The error's code (exit 1 or 2). */
  code?: string;
  /** Fields the `--json` error object must carry besides code and message. */
  fields?: Record<string, unknown>;
  /** The result is text also with `--json` (a usage asked for). */
  text?: true;
}

const f = runFixture();
const state = f.state;
const cancelCli = 'conv-cancel-json';
const cancelHuman = 'conv-cancel-text';

function cli(args: string[]) {
  return spawnSync(process.execPath, [CLI, ...args], { cwd: f.dir, encoding: 'utf8' });
}

/** Progress lines a successful command may print on stderr (docs/cli.md#streams): `run`'s steps, the checks' progress. */
const PROGRESS = /^(ordivon run: .*|  \S.*|\S+: checked .*)$/;

function specFile(name: string, spec: object): string {
  const file = join(f.dir, name);
  writeFileSync(file, JSON.stringify(spec));
  return file;
}

const specA = specFile('conv-a.json', { ...SPEC, taskId: 'conv-new-json' });
const specB = specFile('conv-b.json', { ...SPEC, taskId: 'conv-new-text' });
const badSpec = specFile('conv-bad.json', { ...SPEC, requiredArtifacts: 'none' });
const missing = join(f.dir, 'no-state-here');
const stateFile = specFile('a-file', {});
const repo = join(f.dir, 'repo');
const RUN = ['run', '--spec', 'spec.json', '--stages', 'investigate=a,fix=b'];

const ROWS: Row[] = [
  { name: 'help', args: () => ['--help'], exit: 0, text: true },
  { name: "a command's help", args: () => ['decide', '--help'], exit: 0, text: true },
  { name: 'version', args: () => ['--version'], exit: 0 },
  { name: "a group's help", args: () => ['task', '--help'], exit: 0, text: true },
  { name: 'a group without its subcommand', args: () => ['task'], exit: 2, code: 'usage' },
  { name: 'no command', args: () => [], exit: 2, code: 'usage' },
  { name: 'an unknown command', args: () => ['lsit'], exit: 2, code: 'usage' },

  { name: 'task create', args: (json) => ['task', 'create', '--spec', json ? specA : specB], exit: 0 },
  {
    name: 'task create: the id is taken',
    args: () => ['task', 'create', '--spec', specA],
    exit: 1,
    code: 'task_exists',
  },
  { name: 'task create: a bad spec', args: () => ['task', 'create', '--spec', badSpec], exit: 2, code: 'invalid_spec' },

  {
    name: 'send',
    args: (json) => ['send', json ? cancelCli : cancelHuman, '{"type":"task.cancel","reason":"done"}'],
    exit: 0,
  },
  {
    name: 'send: refused, nothing written',
    args: () => ['send', cancelCli, '{"type":"task.cancel","reason":"again"}'],
    exit: 1,
    code: 'invalid_transition',
    fields: { taskId: cancelCli, state: 'cancelled', revision: 2, written: false },
  },
  {
    name: 'send: a Host-only event',
    args: () => ['send', 'conv-ask', '{"type":"dispatch.ack","clientRequestId":"x","jobId":"y"}'],
    exit: 1,
    code: 'not_allowed',
    fields: { taskId: 'conv-ask', written: false },
  },
  { name: 'send: not JSON', args: () => ['send', cancelCli, '{not json'], exit: 2, code: 'invalid_json' },
  {
    name: 'send: an unknown key',
    args: () => ['send', 'conv-ask', '{"type":"task.cancel","reson":"x"}'],
    exit: 2,
    code: 'invalid_event',
    fields: { path: 'reson', taskId: 'conv-ask', written: false },
  },

  { name: 'decide', args: (json) => ['decide', 'conv-ask', json ? 'q-json' : 'q-text', '--answer', 'ship'], exit: 0 },
  {
    name: 'decide: answered already, retained',
    args: () => ['decide', 'conv-ask', 'q-json', '--answer', 'hold'],
    exit: 1,
    code: 'decision_not_pending',
    fields: { path: 'requestId', taskId: 'conv-ask', requestId: 'q-json', written: true },
  },
  { name: 'decide: no --answer', args: () => ['decide', 'conv-ask', 'q-json'], exit: 2, code: 'usage' },

  { name: 'show', args: () => ['show', 'conv-ask'], exit: 0 },
  { name: 'show: no such Task', args: () => ['show', 'nope'], exit: 1, code: 'task_not_found' },
  { name: 'show: an unknown flag', args: () => ['show', 'conv-ask', '--bogus'], exit: 2, code: 'usage' },

  { name: 'list', args: () => ['list'], exit: 0 },
  { name: 'list: no state root', args: () => ['list', '--state', missing], exit: 1, code: 'state_missing' },
  { name: 'list: an extra argument', args: () => ['list', 'extra'], exit: 2, code: 'usage' },

  { name: 'doctor', args: () => ['doctor'], exit: 0 },
  {
    name: 'doctor: a file as state root',
    args: () => ['doctor', '--state', stateFile],
    exit: 1,
    code: 'state_not_directory',
  },
  { name: 'doctor: a flag given a value', args: () => ['doctor', '--full=yes'], exit: 2, code: 'usage' },

  { name: 'run', args: () => RUN, exit: 0 },
  {
    name: 'run: every stage given ran and the Task is not completed',
    args: (json) => ['run', '--spec', 'spec.json', '--stages', 'investigate=a', '--task', `conv-run-${json}`],
    exit: 1,
    code: 'not_completed',
    fields: { taskId: 'conv-run-true', completed: false },
  },
  {
    name: 'run: --apply without a repository',
    args: () => [...RUN, '--apply', '--repo', missing],
    exit: 1,
    code: 'not_a_repository',
  },
  {
    name: 'run: a malformed --stages',
    args: () => ['run', '--spec', 'spec.json', '--stages', 'fix'],
    exit: 2,
    code: 'usage',
  },

  { name: 'diff', args: () => ['diff', 'run-1'], exit: 0 },
  { name: 'diff: no outcome', args: () => ['diff', 'conv-ask'], exit: 1, code: 'no_outcome' },
  { name: 'diff: no TASK_ID', args: () => ['diff'], exit: 2, code: 'usage' },

  { name: 'export', args: (json) => ['export', 'run-1', '--to', join(f.dir, json ? 'out-json' : 'out-text')], exit: 0 },
  {
    name: 'export: DIR not empty',
    args: () => ['export', 'run-1', '--to', join(f.dir, 'out-json')],
    exit: 1,
    code: 'export_exists',
  },
  { name: 'export: no --to', args: () => ['export', 'run-1'], exit: 2, code: 'usage' },

  {
    name: 'apply',
    args: (json) => ['apply', 'run-1', '--repo', repo, '--branch', json ? 'b-json' : 'b-text'],
    exit: 0,
  },
  {
    name: 'apply: the branch exists',
    args: () => ['apply', 'run-1', '--repo', repo, '--branch', 'b-json'],
    exit: 1,
    code: 'branch_exists',
  },
  { name: 'apply: an unexpected argument', args: () => ['apply', 'run-1', 'extra'], exit: 2, code: 'usage' },

  { name: 'backup', args: (json) => ['backup', join(f.dir, json ? 'bk-json' : 'bk-text')], exit: 0 },
  { name: 'backup: DEST not empty', args: () => ['backup', join(f.dir, 'bk-json')], exit: 1, code: 'backup_exists' },
  { name: 'backup: no DEST', args: () => ['backup'], exit: 2, code: 'usage' },

  {
    name: 'restore',
    args: (json) => ['restore', join(f.dir, 'bk-json'), '--state', join(f.dir, json ? 'rs-json' : 'rs-text')],
    exit: 0,
  },
  {
    name: 'restore: the root is not empty',
    args: () => ['restore', join(f.dir, 'bk-json')],
    exit: 1,
    code: 'restore_not_empty',
  },
  {
    name: 'restore: --force given a value',
    args: () => ['restore', join(f.dir, 'bk-json'), '--force=no'],
    exit: 2,
    code: 'usage',
  },

  { name: 'graph', args: () => ['graph'], exit: 0 },
  { name: 'graph: an unknown format', args: () => ['graph', '--format', 'svg'], exit: 2, code: 'usage' },

  {
    name: 'serve: a file as state root',
    args: () => ['serve', '--state', stateFile, '--port', '0'],
    exit: 1,
    code: 'state_not_directory',
  },
  { name: 'serve: a bad port', args: () => ['serve', '--port', '70000'], exit: 2, code: 'usage' },
  {
    name: 'serve: --host 0.0.0.0 without a token',
    args: () => ['serve', '--host', '0.0.0.0', '--port', '0', '--state', join(f.dir, 'never-made')],
    exit: 2,
    code: 'token_required',
    fields: { path: '--host' },
  },
  { name: 'login: no service holds the root', args: () => ['login'], exit: 1, code: 'service_not_running' },

  { name: 'bench: a bad size', args: () => ['bench', '--sizes', 'many'], exit: 2, code: 'usage' },
  { name: 'demo: an unknown workload', args: () => ['demo', '--workload', 'nope'], exit: 2, code: 'usage' },
];

describe('one CLI convention: streams, exit codes, one JSON error shape', { timeout: 300_000 }, () => {
  before(async () => {
    f.configure('fix');
    // The Tasks and DecisionRequests the rows refer to, written through the library.
    const sup = createSupervisor({ state });
    await sup.start();
    for (const taskId of ['conv-ask', cancelCli, cancelHuman]) await sup.createTask({ ...SPEC, taskId });
    for (const id of ['q-json', 'q-text']) assert.equal(await sup.openRequest('conv-ask', operatorRequest(id)), true);
    await sup.stop();
    // A repository whose HEAD is the seed run-1 starts from, for apply.
    seedRepo(f, 'repo'); // at `repo`
  });

  for (const row of ROWS)
    it(`${row.name}: exit ${row.exit}${row.code ? ` ${row.code}` : ''}`, () => {
      for (const json of [true, false]) {
        const args = [...row.args(json), ...(row.args(json).includes('--state') ? [] : ['--state', state])];
        const r = cli(json ? [...args, '--json'] : args);
        const what = `${json ? '--json ' : ''}${args.join(' ')}: ${r.stderr.slice(-2000)}`;
        assert.equal(r.status, row.exit, what);
        if (row.exit === 0) {
          assert.notEqual(r.stdout, '', `${what}: the result on stdout`);
          if (json && !row.text) JSON.parse(r.stdout);
          const stray = r.stderr.split('\n').filter((line) => line !== '' && !PROGRESS.test(line));
          assert.deepEqual(stray, [], `${what}: only progress on stderr`);
          continue;
        }
        assert.equal(r.stdout, '', `${what}: nothing on stdout`);
        // The error comes after any progress lines: with --json its document is stderr's last line.
        const lines = r.stderr.trimEnd().split('\n');
        const first = lines.findIndex((line) => !PROGRESS.test(line));
        if (json) {
          assert.equal(first, lines.length - 1, `${what}: only progress before the error`);
          const document = JSON.parse(lines.at(-1)!) as { error: Record<string, unknown> };
          assert.deepEqual(Object.keys(document), ['error'], what);
          const { error } = document;
          assert.equal(error['code'], row.code, what);
          assert.equal(typeof error['message'], 'string', what);
          if ('path' in error) assert.equal(typeof error['path'], 'string', what);
          for (const [key, value] of Object.entries(row.fields ?? {}))
            assert.deepEqual(error[key], value, `${what}: ${key}`);
        } else {
          assert.ok(lines[first]!.startsWith(`ordivon: ${row.code}: `), what);
        }
      }
    });
});
