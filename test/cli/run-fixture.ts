import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, watch, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../support/temp.js';

export const CLI = fileURLToPath(new URL('../../cli/ordivon.js', import.meta.url));

/**
 * The agent behind the `command` driver in the `ordivon run` tests: a real process that reads the
 * prompt on stdin and works in the workspace. `investigate` writes findings.json; `fix` repairs
 * a.js and writes report.md; `fix-nothing` writes nothing; `fix-hang-once` hangs the first time
 * (writing its pid to HANG_MARK, so the test can see it was stopped) and fixes the next time.
 */
const AGENT = `
const fs = require('node:fs');
const prompt = fs.readFileSync(0, 'utf8');
const mode = process.argv[2];
const fix = () => {
  fs.writeFileSync('a.js', 'export const x = 2;\\n');
  fs.writeFileSync('report.md', '# Fixed\\nx is 2 now\\n');
};
if (mode === 'investigate') fs.writeFileSync('findings.json', JSON.stringify({ cause: 'x is 1' }));
else if (mode === 'fix') fix();
else if (mode === 'fix-hang-once') {
  if (!fs.existsSync(process.env.HANG_MARK)) {
    fs.writeFileSync(process.env.HANG_MARK, String(process.pid));
    setInterval(() => {}, 1 << 30);
    return;
  }
  fix();
}
console.log(mode + ' done, prompt of ' + prompt.length + ' chars');
`;

export const SPEC = {
  taskId: 'run-1',
  title: 'Make x equal 2',
  goal: 'The module a.js exports x; make it 2.',
  requiredArtifacts: [
    {
      name: 'findings.json',
      kind: 'json',
      schema: { type: 'object', required: ['cause'], properties: { cause: { type: 'string' } } },
    },
    { name: 'report.md', kind: 'text', pattern: '^# ' },
  ],
  stages: [
    { name: 'investigate', instructions: 'Find why: {{task.goal}}', produces: ['findings.json'] },
    { name: 'fix', instructions: 'Fix it.', produces: ['report.md'], proposesCompletion: true },
  ],
  result: 'report.md',
  acceptance: {
    command: process.execPath,
    args: ['-e', "import('./a.js').then((m) => process.exit(m.x === 2 ? 0 : 1))"],
  },
};

export interface RunFixture {
  dir: string;
  state: string;
  spec: string;
  hangMark: string;
  /** Writes `ordivon.config.json` with harness `a` (investigate) and `b` running the agent in `fixMode`. */
  configure(fixMode: 'fix' | 'fix-nothing' | 'fix-hang-once'): void;
}

/** A directory with the spec (seeded from `seed/`), the agent and its configuration, and a state root. */
export function runFixture(): RunFixture {
  const dir = tempDir('ordivon-run-');
  mkdirSync(join(dir, 'seed'));
  writeFileSync(join(dir, 'seed', 'a.js'), 'export const x = 1;\n');
  writeFileSync(join(dir, 'agent.cjs'), AGENT);
  const spec = join(dir, 'spec.json');
  writeFileSync(spec, JSON.stringify({ ...SPEC, workspaceSeed: join(dir, 'seed') }));
  // The agent runs confined: the marks folder is the one place outside its workspace it writes.
  mkdirSync(join(dir, 'marks'));
  const hangMark = join(dir, 'marks', 'hang.pid');
  const agent = (mode: string) => ({
    driver: 'command',
    command: process.execPath,
    args: [join(dir, 'agent.cjs'), mode],
    env: { HANG_MARK: hangMark },
    writable: [join(dir, 'marks')],
  });
  return {
    dir,
    state: join(dir, 'state'),
    spec,
    hangMark,
    configure: (fixMode) =>
      writeFileSync(
        join(dir, 'ordivon.config.json'),
        JSON.stringify({ harnesses: { a: agent('investigate'), b: agent(fixMode) } }),
      ),
  };
}

/** `ordivon ARGS` in `cwd`, to the end. */
export function ordivon(cwd: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8' });
  return {
    status: r.status,
    stdout: r.stdout,
    stderr: r.stderr,
    json: () => JSON.parse(r.stdout),
    /** The `--json` error object, printed on stderr (stdout stays empty). */
    error: () => lastError(r.stderr),
  };
}

/**
 * Starts `ordivon ARGS` in `cwd`, SIGKILLs it as soon as `file` exists (the provider writes it once
 * it runs), and resolves with how it ended and its stderr.
 */
export function killWhenFile(
  cwd: string,
  file: string,
  ...args: string[]
): Promise<{ signal: string | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const watcher = watch(dirname(file), () => {
    if (existsSync(file)) child.kill('SIGKILL');
  });
  return new Promise((resolve) =>
    child.once('close', (_code, signal) => {
      watcher.close();
      resolve({ signal, stderr });
    }),
  );
}

/** The `--json` error object of a run: stderr's last line, after the progress lines (docs/cli.md). */
export function lastError(stderr: string): Record<string, any> {
  return JSON.parse(stderr.trimEnd().split('\n').at(-1)!).error;
}

/** `git ARGS` in `cwd`: its stdout; the test fails when git does. */
export function git(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** A git repository in `<fixture>/<name>` whose one commit is the fixture's seed. */
export function seedRepo(f: RunFixture, name: string): string {
  const repo = join(f.dir, name);
  cpSync(join(f.dir, 'seed'), repo, { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'config', 'user.name', 'Test User');
  git(repo, 'config', 'user.email', 'test@example.com');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'seed');
  return repo;
}
