import assert from 'node:assert/strict';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { LOOP_TOOLS, READ_ONLY_TOOLS, runTool, type ToolContext, type ToolOutcome } from '../../drivers/loop/tools.js';
import { DEFAULT_SANDBOX_LIMITS, NOBODY, probeSandbox } from '../../os/index.js';
import { optionalPart } from '../support/optional-part.js';
import { tempDir } from '../support/temp.js';
import { until } from '../support/until.js';

const probe = probeSandbox();
const BWRAP = optionalPart('bubblewrap', probe.ok ? '/usr/bin/bwrap' : undefined, probe.ok ? '' : probe.detail);

function context(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    workspace: tempDir('ordivon-loop-tools-'),
    env: {},
    signal: new AbortController().signal,
    commandTimeoutMs: 60_000,
    graceMs: 5_000,
    maxOutputChars: 20_000,
    ...overrides,
  };
}

function call(ctx: ToolContext, name: string, args: unknown): Promise<ToolOutcome> {
  return runTool({ id: 'call-1', name, arguments: typeof args === 'string' ? args : JSON.stringify(args) }, ctx);
}

/** Writes `files` (path → content) under `dir`, making their folders. */
function plant(dir: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

/** Pids of the processes (zombies have none) whose working directory is `dir`. */
function runningIn(dir: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        return readlinkSync(`/proc/${name}/cwd`) === dir;
      } catch {
        return false; // gone, or a zombie
      }
    })
    .map(Number);
}

/** A command that starts a grandchild holding the output pipes and says its pid in bg.pid. */
const WITH_GRANDCHILD = 'sleep 300 & echo $! > bg.pid; wait';

describe('Loop v0 tools', { timeout: 60_000 }, () => {
  it('offer each tool with a strict JSON Schema object, and name list_files, read_file and search read-only', () => {
    assert.deepEqual(
      LOOP_TOOLS.map((tool) => tool.name),
      ['list_files', 'read_file', 'search', 'write_file', 'edit_file', 'run_command', 'finish'],
    );
    for (const tool of LOOP_TOOLS) {
      assert.equal(tool.parameters['type'], 'object', tool.name);
      assert.equal(tool.parameters['additionalProperties'], false, tool.name);
      assert.equal(typeof tool.parameters['properties'], 'object', tool.name);
      assert.ok(!('$schema' in tool.parameters), tool.name);
      assert.ok(tool.description.length > 40, tool.name);
    }
    const required = Object.fromEntries(LOOP_TOOLS.map((tool) => [tool.name, tool.parameters['required'] ?? []]));
    assert.deepEqual(required, {
      list_files: [],
      read_file: ['path'],
      search: ['pattern'],
      write_file: ['path', 'content'],
      edit_file: ['path', 'old', 'new'],
      run_command: ['command'],
      finish: ['summary'],
    });
    assert.deepEqual([...READ_ONLY_TOOLS].sort(), ['list_files', 'read_file', 'search']);
  });

  describe('list_files', () => {
    it('lists entries in tree order to the depth asked, folders with a slash, .git not entered', async () => {
      const ctx = context();
      plant(ctx.workspace, { 'b.txt': '', 'a/x.ts': '', 'a/deep/y.ts': '', '.git/HEAD': 'ref' });
      symlinkSync('b.txt', join(ctx.workspace, 'link'));
      const listed = await call(ctx, 'list_files', {});
      assert.deepEqual(listed, { ok: true, output: ['.git/', 'a/', 'a/deep/', 'a/x.ts', 'b.txt', 'link@'].join('\n') });
      assert.equal((await call(ctx, 'list_files', { path: 'a', depth: 1 })).output, 'a/deep/\na/x.ts');
      assert.equal((await call(ctx, 'list_files', { depth: 5 })).output.includes('a/deep/y.ts'), true);
    });

    it('shows 500 entries and counts the rest', async () => {
      const ctx = context();
      for (let i = 0; i < 510; i++) writeFileSync(join(ctx.workspace, `f${String(i).padStart(3, '0')}`), '');
      const lines = (await call(ctx, 'list_files', {})).output.split('\n');
      assert.equal(lines.length, 501);
      assert.equal(lines[499], 'f499');
      assert.match(lines[500]!, /^… 10 more/);
    });

    it('refuses a file and a missing path', async () => {
      const ctx = context();
      plant(ctx.workspace, { 'a.txt': '' });
      assert.equal((await call(ctx, 'list_files', { path: 'a.txt' })).code, 'not_a_directory');
      assert.equal((await call(ctx, 'list_files', { path: 'nope' })).code, 'file_missing');
    });
  });

  describe('read_file', () => {
    it('shows numbered lines, the whole file or the range asked', async () => {
      const ctx = context();
      plant(ctx.workspace, { 'src/a.txt': 'one\ntwo\nthree\n' });
      assert.deepEqual(await call(ctx, 'read_file', { path: 'src/a.txt' }), {
        ok: true,
        output: '1\tone\n2\ttwo\n3\tthree',
      });
      assert.equal((await call(ctx, 'read_file', { path: 'src/a.txt', offset: 2, limit: 1 })).output, '2\ttwo');
      assert.match((await call(ctx, 'read_file', { path: 'src/a.txt', offset: 9 })).output, /has 3 lines/);
    });

    it('cuts a long file at the output limit, saying which line to read on from', async () => {
      const ctx = context({ maxOutputChars: 400 });
      plant(ctx.workspace, { 'long.txt': Array.from({ length: 200 }, (_, i) => `line ${i + 1}`).join('\n') });
      const read = await call(ctx, 'read_file', { path: 'long.txt' });
      assert.equal(read.ok, true);
      assert.ok(read.output.length <= 400, String(read.output.length));
      const next = /read on with offset (\d+)/.exec(read.output);
      assert.ok(next, read.output);
      const lastShown = read.output.split('\n').at(-2)!;
      assert.equal(lastShown, `${Number(next[1]) - 1}\tline ${Number(next[1]) - 1}`);
    });

    it('refuses a missing file, a folder, a binary file and a file over 8 MiB', async () => {
      const ctx = context();
      plant(ctx.workspace, { 'dir/a.txt': '', 'bin.dat': 'a\0b' });
      writeFileSync(join(ctx.workspace, 'huge.txt'), '');
      truncateSync(join(ctx.workspace, 'huge.txt'), (8 << 20) + 1);
      const codes = [];
      for (const path of ['missing.txt', 'dir', 'bin.dat', 'huge.txt'])
        codes.push((await call(ctx, 'read_file', { path })).code);
      assert.deepEqual(codes, ['file_missing', 'not_a_file', 'file_binary', 'file_too_large']);
    });

    it('reads .git, which it may not write', async () => {
      const ctx = context();
      plant(ctx.workspace, { '.git/HEAD': 'ref: refs/heads/main\n' });
      assert.equal((await call(ctx, 'read_file', { path: '.git/HEAD' })).output, '1\tref: refs/heads/main');
    });
  });

  describe('search', () => {
    it('answers file:line: text for a literal substring, skipping binary files, symlinks and .git', async () => {
      const ctx = context();
      plant(ctx.workspace, {
        'b.ts': 'const x = a.b(c);\nnothing\n',
        'a/c.ts': 'a.b(c) again\n',
        'a/bin.dat': 'a.b(c)\0',
        '.git/config': 'a.b(c)\n',
        'regex.txt': 'aXb(c)\n',
      });
      symlinkSync('b.ts', join(ctx.workspace, 'link.ts'));
      assert.deepEqual(await call(ctx, 'search', { pattern: 'a.b(c)' }), {
        ok: true,
        output: 'a/c.ts:1: a.b(c) again\nb.ts:1: const x = a.b(c);',
      });
      assert.equal(
        (await call(ctx, 'search', { pattern: 'a.b(c)', path: 'b.ts' })).output,
        'b.ts:1: const x = a.b(c);',
      );
      assert.match((await call(ctx, 'search', { pattern: 'absent' })).output, /^no line under \. contains "absent"/);
    });

    it('stops at maxResults, saying so', async () => {
      const ctx = context();
      plant(ctx.workspace, { 'many.txt': 'hit\n'.repeat(10) });
      const lines = (await call(ctx, 'search', { pattern: 'hit', maxResults: 3 })).output.split('\n');
      assert.deepEqual(lines.slice(0, 3), ['many.txt:1: hit', 'many.txt:2: hit', 'many.txt:3: hit']);
      assert.match(lines[3]!, /stopped at 3 matches/);
    });
  });

  describe('write_file', () => {
    it('creates a file and its folders, replaces a whole file keeping its mode, and leaves no temp file', async () => {
      const ctx = context();
      const created = await call(ctx, 'write_file', { path: 'new/deep/a.sh', content: 'echo one\n' });
      assert.deepEqual(created, { ok: true, output: 'created new/deep/a.sh (9 bytes, 1 line)' });
      chmodSync(join(ctx.workspace, 'new/deep/a.sh'), 0o755);
      const replaced = await call(ctx, 'write_file', { path: 'new/deep/a.sh', content: 'echo two\n' });
      assert.equal(replaced.output, 'replaced new/deep/a.sh (9 bytes, 1 line)');
      assert.equal(readFileSync(join(ctx.workspace, 'new/deep/a.sh'), 'utf8'), 'echo two\n');
      assert.equal(statSync(join(ctx.workspace, 'new/deep/a.sh')).mode & 0o777, 0o755);
      assert.deepEqual(readdirSync(join(ctx.workspace, 'new/deep')), ['a.sh']);
    });

    it('refuses .git, a symlink inside the workspace and a folder', async () => {
      const ctx = context();
      plant(ctx.workspace, { '.git/HEAD': 'ref\n', 'real.txt': 'real\n', 'dir/x': '' });
      symlinkSync('real.txt', join(ctx.workspace, 'link.txt'));
      symlinkSync('.git', join(ctx.workspace, 'gitlink'));
      const refusals = [];
      for (const path of ['.git/HEAD', '.git/hooks/pre-commit', 'gitlink/HEAD', 'link.txt', 'dir'])
        refusals.push((await call(ctx, 'write_file', { path, content: 'x' })).code);
      assert.deepEqual(refusals, ['path_refused', 'path_refused', 'path_refused', 'symlink_refused', 'not_a_file']);
      assert.equal((await call(ctx, 'edit_file', { path: '.git/HEAD', old: 'ref', new: 'x' })).code, 'path_refused');
      assert.equal(readFileSync(join(ctx.workspace, '.git/HEAD'), 'utf8'), 'ref\n');
      assert.equal(readFileSync(join(ctx.workspace, 'real.txt'), 'utf8'), 'real\n');
      assert.equal(existsSync(join(ctx.workspace, '.git/hooks')), false);
    });
  });

  describe('edit_file', () => {
    it('replaces the one occurrence of old by new, literally', async () => {
      const ctx = context();
      plant(ctx.workspace, { 'a.ts': 'const a = 1;\nconst b = 2;\n' });
      const edited = await call(ctx, 'edit_file', { path: 'a.ts', old: 'const b = 2;', new: "const b = '$&$1';" });
      assert.deepEqual(edited, { ok: true, output: 'edited a.ts: 1 line from line 2 replaced by 1 line' });
      assert.equal(readFileSync(join(ctx.workspace, 'a.ts'), 'utf8'), "const a = 1;\nconst b = '$&$1';\n");
    });

    it('refuses an old that does not occur or occurs more than once, saying how often, and changes nothing', async () => {
      const ctx = context();
      plant(ctx.workspace, { 'a.ts': 'x = 1;\nx = 1;\n' });
      const none = await call(ctx, 'edit_file', { path: 'a.ts', old: 'y = 1;', new: '' });
      assert.equal(none.code, 'edit_no_match');
      assert.match(none.output, /occurs 0 times/);
      const twice = await call(ctx, 'edit_file', { path: 'a.ts', old: 'x = 1;', new: 'x = 2;' });
      assert.equal(twice.code, 'edit_ambiguous');
      assert.match(twice.output, /occurs 2 times/);
      assert.equal(readFileSync(join(ctx.workspace, 'a.ts'), 'utf8'), 'x = 1;\nx = 1;\n');
      assert.equal((await call(ctx, 'edit_file', { path: 'gone.ts', old: 'a', new: 'b' })).code, 'file_missing');
    });
  });

  describe('paths that lead out of the workspace', () => {
    const escapes = [
      { how: '../x', path: () => '../escaped.txt', code: 'path_escape' },
      { how: 'an absolute path outside', path: (outside: string) => join(outside, 'escaped.txt'), code: 'path_escape' },
      { how: 'a symlink inside to a folder outside', path: () => 'out/escaped.txt', code: 'symlink_escape' },
      { how: 'a symlink inside to a file outside', path: () => 'out-file', code: 'symlink_escape' },
    ];
    for (const { how, path, code } of escapes)
      it(`refuses ${how} with ${code} for every tool, and writes nothing outside`, async () => {
        const outside = tempDir('ordivon-loop-outside-');
        plant(outside, { 'secret.txt': 'secret\n' });
        const ctx = context({ workspace: join(tempDir('ordivon-loop-parent-'), 'ws') });
        mkdirSync(ctx.workspace);
        symlinkSync(outside, join(ctx.workspace, 'out'));
        symlinkSync(join(outside, 'secret.txt'), join(ctx.workspace, 'out-file'));
        const target = path(outside);
        const outcomes = [
          await call(ctx, 'read_file', { path: target }),
          await call(ctx, 'list_files', { path: target }),
          await call(ctx, 'search', { pattern: 'secret', path: target }),
          await call(ctx, 'write_file', { path: target, content: 'written' }),
          await call(ctx, 'edit_file', { path: target, old: 'secret', new: 'edited' }),
        ];
        assert.deepEqual(
          outcomes.map((outcome) => [outcome.ok, outcome.code]),
          outcomes.map(() => [false, code]),
        );
        assert.ok(outcomes.every((outcome) => !outcome.output.includes('secret\n')));
        assert.deepEqual(readdirSync(outside), ['secret.txt']);
        assert.equal(readFileSync(join(outside, 'secret.txt'), 'utf8'), 'secret\n');
        assert.equal(existsSync(join(ctx.workspace, '..', 'escaped.txt')), false);
      });
  });

  describe('bad calls', () => {
    const cases = [
      { what: 'a missing field', name: 'read_file', args: {}, path: 'path' },
      { what: 'a field of the wrong type', name: 'list_files', args: { depth: 'deep' }, path: 'depth' },
      { what: 'a field out of range', name: 'list_files', args: { depth: 9 }, path: 'depth' },
      { what: 'arguments that are not JSON', name: 'write_file', args: '{"path": "a.txt", ', path: '' },
      { what: 'arguments that are no object', name: 'finish', args: '["done"]', path: '' },
      {
        what: 'a timeout over the limit',
        name: 'run_command',
        args: { command: 'true', timeoutMs: 60_001 },
        path: 'timeoutMs',
      },
    ];
    for (const { what, name, args, path } of cases)
      it(`refuses ${what} as tool_input_invalid, naming the field`, async () => {
        const ctx = context();
        const outcome = await call(ctx, name, args);
        assert.equal(outcome.ok, false);
        assert.equal(outcome.code, 'tool_input_invalid');
        assert.equal(outcome.path, path);
        if (path !== '') assert.match(outcome.output, new RegExp(`\\b${path}\\b`));
        assert.deepEqual(readdirSync(ctx.workspace), []);
      });

    it('refuses an unknown tool as tool_unknown, naming the tools there are', async () => {
      const outcome = await call(context(), 'delete_everything', {});
      assert.equal(outcome.code, 'tool_unknown');
      assert.match(outcome.output, /list_files, read_file/);
    });
  });

  it('finish returns the summary and does nothing else', async () => {
    const ctx = context();
    assert.deepEqual(await call(ctx, 'finish', { summary: 'fixed the parser; tests pass' }), {
      ok: true,
      output: 'finished',
      finish: { summary: 'fixed the parser; tests pass' },
    });
    assert.deepEqual(readdirSync(ctx.workspace), []);
  });

  describe('run_command', () => {
    it('answers the exit code, stdout and stderr; a non-zero exit is an answer, not a failure', async () => {
      const ctx = context({ env: { GREETING: 'hello' } });
      const outcome = await call(ctx, 'run_command', { command: 'echo "$GREETING"; pwd; echo oops >&2; exit 3' });
      assert.deepEqual(outcome, {
        ok: true,
        exitCode: 3,
        output: `exit 3\n--- stdout ---\nhello\n${ctx.workspace}\n--- stderr ---\noops`,
      });
    });

    it('runs with stdin closed and exactly the given environment, plus PATH', async () => {
      const ctx = context({ env: { ONLY: 'this' } });
      const outcome = await call(ctx, 'run_command', {
        command: 'cat; env | grep -v "^PWD=" | grep -v "^SHLVL=" | grep -v "^_=" | sort',
      });
      assert.equal(outcome.output, `exit 0\n--- stdout ---\nONLY=this\nPATH=${process.env['PATH']}`);
    });

    it('keeps the head and the tail of a long output, saying how much was cut', async () => {
      const ctx = context({ maxOutputChars: 300 });
      const outcome = await call(ctx, 'run_command', { command: 'seq 1 100000' });
      assert.ok(outcome.output.length <= 300, String(outcome.output.length));
      assert.match(outcome.output, /^exit 0\n--- stdout ---\n1\n2\n3\n/);
      assert.match(outcome.output, /\[… \d+ bytes cut …\]/);
      assert.match(outcome.output, /\n99999\n100000$/);
    });

    it('stops what the command left running in the background when it exits', async () => {
      const ctx = context();
      const outcome = await call(ctx, 'run_command', { command: 'sleep 300 & echo started' });
      assert.equal(outcome.ok, true);
      assert.match(outcome.output, /background were stopped/);
      assert.deepEqual(runningIn(ctx.workspace), []);
    });

    it('stops the whole tree at the timeout, a grandchild included: command_timeout', async () => {
      const ctx = context();
      const outcome = await call(ctx, 'run_command', { command: WITH_GRANDCHILD, timeoutMs: 1_000 });
      assert.equal(outcome.ok, false);
      assert.equal(outcome.code, 'command_timeout');
      assert.match(outcome.output, /^timed out after 1000 ms/);
      const grandchild = Number(readFileSync(join(ctx.workspace, 'bg.pid'), 'utf8'));
      assert.ok(grandchild > 0);
      assert.deepEqual(runningIn(ctx.workspace), [], 'a process of the command outlived its timeout');
    });

    it('stops the whole tree when the run is aborted: command_aborted', async () => {
      const controller = new AbortController();
      const ctx = context({ signal: controller.signal });
      const running = call(ctx, 'run_command', { command: WITH_GRANDCHILD });
      await until('the grandchild started', 10_000, async () =>
        existsSync(join(ctx.workspace, 'bg.pid')) && readFileSync(join(ctx.workspace, 'bg.pid'), 'utf8').endsWith('\n')
          ? true
          : undefined,
      );
      assert.equal(runningIn(ctx.workspace).length >= 2, true);
      controller.abort();
      const outcome = await running;
      assert.equal(outcome.code, 'command_aborted');
      assert.deepEqual(runningIn(ctx.workspace), [], 'a process of the command outlived the abort');
    });

    it('starts nothing once the run is aborted', async () => {
      const controller = new AbortController();
      controller.abort();
      const ctx = context({ signal: controller.signal });
      const outcome = await call(ctx, 'run_command', { command: 'touch ran' });
      assert.equal(outcome.code, 'command_aborted');
      assert.equal(existsSync(join(ctx.workspace, 'ran')), false);
    });

    it('answers command_spawn_failed when the command cannot start', async () => {
      const gone = context({ workspace: join(tempDir('ordivon-loop-gone-'), 'missing') });
      assert.equal((await call(gone, 'run_command', { command: 'true' })).code, 'command_spawn_failed');
      // A sandbox that would show a hidden path is refused before anything starts.
      const ctx = context();
      const hidden = tempDir('ordivon-loop-hidden-');
      ctx.sandbox = {
        workspace: ctx.workspace,
        network: 'none',
        readable: [hidden],
        writable: [],
        hidden: [hidden],
        limits: DEFAULT_SANDBOX_LIMITS,
      };
      const refused = await call(ctx, 'run_command', { command: 'touch ran' });
      assert.equal(refused.code, 'command_spawn_failed');
      assert.match(refused.output, /overlaps/);
      assert.equal(existsSync(join(ctx.workspace, 'ran')), false);
    });

    it('confined, cannot read a hidden folder the same command reads unconfined', { skip: BWRAP.skip }, async () => {
      BWRAP.need();
      const base = tempDir('ordivon-loop-confined-');
      const workspace = join(base, 'ws');
      const state = join(base, 'state');
      plant(base, { 'ws/visible.txt': 'visible\n', 'state/secret.txt': 'secret\n' });
      const command = `cat visible.txt; cat ${join(state, 'secret.txt')}`;
      const unconfined = await call(context({ workspace }), 'run_command', { command });
      assert.equal(unconfined.output, 'exit 0\n--- stdout ---\nvisible\nsecret');
      const ctx = context({
        workspace,
        sandbox: {
          workspace,
          network: 'none',
          readable: [],
          writable: [],
          hidden: [state],
          limits: DEFAULT_SANDBOX_LIMITS,
          ...(process.getuid?.() === 0 ? { user: NOBODY } : {}),
        },
      });
      const confined = await call(ctx, 'run_command', { command });
      assert.equal(confined.ok, true);
      assert.notEqual(confined.exitCode, 0);
      assert.match(confined.output, /--- stdout ---\nvisible\n--- stderr ---\n.*secret\.txt.*No such file/);
      assert.ok(!confined.output.includes('secret\n'));
    });
  });
});
