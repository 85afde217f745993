import assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { cpSync, existsSync, lstatSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ordivonProgram } from '../../cli/ordivon.js';
import { tempDir } from '../support/temp.js';

// The package as a user gets it: `npm pack` of this checkout (dist/ is built by `pretest`),
// installed into a project of its own with `--omit=dev`, so nothing of this repository's
// node_modules or devDependencies is reachable from it. What `npm install <tarball>` or a git
// dependency gives, and `npx ordivon` then runs. The CLI is run the ways a user reaches it: npm's
// `node_modules/.bin/ordivon` symlink and `npx ordivon` (a bin that decided it was the entry point
// by comparing paths printed nothing there and exited 0), and by its real path.

/** What a consumer's node_modules may weigh: lmdb's prebuilds, no agent binary (opencode's was 177 MB). */
const NODE_MODULES_LIMIT = 80 * 1024 * 1024;

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };

let project: string;
let bin: string;
let nodeModulesBytes: number;

function sh(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
  return spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 600_000,
    maxBuffer: 64 * 1024 * 1024,
  });
}

function ordivon(args: string[], env: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
  return sh(process.execPath, [bin, ...args], project, env);
}

/** The three ways a user runs the installed CLI: npm's symlink, `npx`, and the file itself. */
const WAYS: Record<string, (args: string[]) => SpawnSyncReturns<string>> = {
  'node_modules/.bin/ordivon': (args) => sh(join(project, 'node_modules', '.bin', 'ordivon'), args, project),
  'npx ordivon': (args) => sh('npx', ['--no-install', 'ordivon', ...args], project),
  'node …/dist/cli/ordivon.js': (args) => ordivon(args),
};

/** Bytes of every file under `dir` (links not followed), as the files' sizes say. */
function treeBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += treeBytes(path);
    else total += lstatSync(path).size;
  }
  return total;
}

/** The first ```LANG block under the README heading `heading`. */
function readmeBlock(heading: string, lang: string): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const at = readme.indexOf(`\n## ${heading}\n`);
  assert.notEqual(at, -1, `README has a "## ${heading}" section`);
  const block = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(readme.slice(at));
  assert.ok(block, `a ${lang} block under "## ${heading}"`);
  return block[1]!;
}

describe('the packed package, installed without devDependencies', () => {
  before(() => {
    const packDir = tempDir('ordivon-pack-');
    // dist/ is already built (pretest); --ignore-scripts: no second tsc run.
    const packed = sh('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', packDir], ROOT);
    assert.equal(packed.status, 0, packed.stderr);
    const [pack] = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    assert.ok(pack, 'npm pack describes the tarball');
    const { filename, files } = pack;
    // The allow-list: compiled library and CLI, the workloads' data, docs; no tests, no sources.
    const paths = files.map((f) => f.path);
    assert.ok(paths.includes('dist/cli/ordivon.js'));
    assert.ok(paths.includes('dist/index.d.ts'));
    assert.deepEqual(
      paths.filter((p) => p.startsWith('dist/test/') || (p.endsWith('.ts') && !p.endsWith('.d.ts'))),
      [],
    );
    project = tempDir('ordivon-user-');
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'user-project', private: true }) + '\n');
    const installed = sh(
      'npm',
      ['install', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline', join(packDir, filename)],
      project,
    );
    assert.equal(installed.status, 0, `${installed.stdout}\n${installed.stderr}`);
    bin = join(project, 'node_modules', 'ordivon', 'dist', 'cli', 'ordivon.js');
    // Nothing of the devDependencies came along, nor any agent binary.
    for (const dev of ['better-sqlite3', 'typescript', '@openai/codex', '@temporalio/worker', 'opencode-linux-x64'])
      assert.equal(existsSync(join(project, 'node_modules', dev)), false, `${dev} is not installed`);
    nodeModulesBytes = treeBytes(join(project, 'node_modules'));
  });

  it(`weighs at most ${NODE_MODULES_LIMIT / 1024 / 1024} MB in the consumer's node_modules`, (t) => {
    t.diagnostic(`node_modules: ${(nodeModulesBytes / 1024 / 1024).toFixed(1)} MB`);
    assert.ok(
      nodeModulesBytes <= NODE_MODULES_LIMIT,
      `node_modules holds ${(nodeModulesBytes / 1024 / 1024).toFixed(1)} MB (at most ${NODE_MODULES_LIMIT / 1024 / 1024})`,
    );
  });

  for (const [way, run] of Object.entries(WAYS))
    it(`${way} --version and --help print, not nothing`, () => {
      const version = run(['--version']);
      assert.equal(version.status, 0, version.stderr);
      assert.equal(version.stdout.trim(), PACKAGE.version, `${way} --version printed the version`);
      const help = run(['--help']);
      assert.equal(help.status, 0, help.stderr);
      assert.match(help.stdout, /^usage: ordivon /m, `${way} --help printed the usage`);
      assert.match(help.stdout, /^ {2}run /m);
    });

  it('ordivon --version and -V print the package version', () => {
    for (const flag of ['--version', '-V']) {
      const r = ordivon([flag]);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout.trim(), PACKAGE.version);
    }
    const json = ordivon(['--version', '--json']);
    assert.deepEqual(JSON.parse(json.stdout), { name: 'ordivon', version: PACKAGE.version });
  });

  it('ordivon --help and every command --help answer 0', async () => {
    const help = ordivon(['--help']);
    assert.equal(help.status, 0, help.stderr);
    for (const cmd of (await ordivonProgram()).commands) {
      assert.match(help.stdout, new RegExp(`^  ${cmd.name}`, 'm'));
      const r = ordivon([...cmd.name.split(' '), '--help']);
      assert.equal(r.status, 0, `${cmd.name} --help: ${r.stderr}`);
      assert.match(r.stdout, new RegExp(`^usage: ordivon ${cmd.name}`), `${cmd.name} --help prints its usage`);
      assert.equal(r.stderr, '', `${cmd.name} --help prints nothing on stderr`);
    }
  });

  it('the demo answers package_missing naming what to install, not a module-not-found stack', () => {
    const r = ordivon(['demo', '--json', '--state', join(project, 'demo-state')]);
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stdout, '', 'an error prints nothing on stdout');
    const answer = JSON.parse(r.stderr) as { error: { code: string; message: string; missing: string[] } };
    assert.equal(answer.error.code, 'package_missing');
    assert.ok(answer.error.missing.includes('better-sqlite3'));
    assert.doesNotMatch(r.stderr + r.stdout, /ERR_MODULE_NOT_FOUND/);
    assert.equal(existsSync(join(project, 'demo-state')), false, 'nothing written');
  });

  it("runs the README's worked example with its files copied in, through npx ordivon", () => {
    // The example and the repository its spec seeds the workspace from (workspaceSeed).
    for (const dir of [join('examples', 'quickstart'), join('workloads', 'duration-v1', 'repo')])
      cpSync(join(ROOT, dir), join(project, dir), { recursive: true });
    // As printed, with the installed bin in place of the clone's `node dist/cli/ordivon.js`.
    const script = readmeBlock('Your own Task: a worked example', 'sh').replaceAll(
      'node dist/cli/ordivon.js',
      'npx --no-install ordivon',
    );
    assert.match(script, /npx --no-install ordivon run /);
    const r = sh('bash', ['-euo', 'pipefail', '-c', script], project);
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /completed: task quickstart-1, outcome sha256:[0-9a-f]{64}/);
    // diff printed the change, apply made the branch: every command of the block did its work.
    assert.match(r.stdout, /^\+\+\+ b\/src\/duration\.js$/m);
    assert.match(r.stdout, /src\/duration\.js \| /);
  });

  it('ordivon bench --quick runs there, skipping the scenarios whose devDependencies it lacks', () => {
    const out = join(project, 'bench-out');
    const r = ordivon(['bench', '--quick', '--json', '--out', out]);
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    const answer = JSON.parse(r.stdout) as {
      files: { results: string; svg?: string };
      skipped?: Array<{ scenario: string; reason: string }>;
    };
    assert.ok(existsSync(answer.files.results), 'the results file is written under --out');
    const results = JSON.parse(readFileSync(answer.files.results, 'utf8')) as {
      scenarios?: unknown;
      skipped: Array<{ scenario: string; reason: string }>;
    };
    const skipped = new Map(results.skipped.map((s) => [s.scenario, s.reason]));
    assert.match(skipped.get('peer') ?? '', /better-sqlite3/, 'the SQLite peer is skipped, naming its package');
    assert.equal(skipped.has('recovery'), false, 'the recovery scenario ran');
    assert.equal(skipped.has('startup'), false, 'the startup scenario ran');
  });

  it('imports as a library from its two entry points, ordivon and ordivon/machines, and nothing deeper', () => {
    const probe = [
      "const root = await import('ordivon');",
      "const machines = await import('ordivon/machines');",
      "let deep = 'importable';",
      "try { await import('ordivon/dist/store/index.js'); } catch (e) { deep = e.code; }",
      'console.log(JSON.stringify({ root: Object.keys(root).sort(), machines: Object.keys(machines).sort(), deep }));',
    ].join('\n');
    const r = sh(process.execPath, ['--input-type=module', '-e', probe], project);
    assert.equal(r.status, 0, r.stderr);
    const seen = JSON.parse(r.stdout) as { root: string[]; machines: string[]; deep: string };
    for (const name of ['createSupervisor', 'openHost', 'TaskSpec', 'HostError'])
      assert.ok(seen.root.includes(name), name);
    for (const name of [
      'EventStore',
      'rebuildAll',
      'createFrontierWork',
      'zodIssue',
      'loadWorkload',
      'supervisorMachine',
    ])
      assert.equal(seen.root.includes(name), false, `${name} is not public`);
    assert.ok(seen.machines.includes('taskMachine'));
    assert.equal(seen.deep, 'ERR_PACKAGE_PATH_NOT_EXPORTED');
  });

  it("the README's embedding example compiles with strict and skipLibCheck off, with the consumer's own TypeScript, and prints what happened", () => {
    // The consumer's own compiler and node types, as a TypeScript project would have them (after
    // the size was taken: they are the consumer's, not the package's).
    const tools = sh(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', '--no-save', 'typescript@5.9', '@types/node@20'],
      project,
    );
    assert.equal(tools.status, 0, `${tools.stdout}\n${tools.stderr}`);
    // Top-level await: an ES module.
    writeFileSync(join(project, 'embed.mts'), readmeBlock('Embedding', 'ts'));
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          skipLibCheck: false,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          types: ['node'],
          outDir: 'out',
        },
        files: ['embed.mts'],
      }),
    );
    const tsc = sh(
      process.execPath,
      [join(project, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project],
      project,
    );
    assert.equal(tsc.status, 0, `${tsc.stdout}\n${tsc.stderr}`);
    // The package's types came from its own dist/, one file that reaches no store or driver.
    const types = readFileSync(join(project, 'node_modules', 'ordivon', 'dist', 'ordivon.d.ts'), 'utf8');
    assert.doesNotMatch(types, /from '(?:lmdb|pg)'/);
    // And it runs: a Host, a Task, an agent in its sandbox, the Host's own check, the outcome.
    const run = sh(process.execPath, [join(project, 'out', 'embed.mjs')], project);
    assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout, /^sent: \{[^]*admitted: true[^]*state: 'assigned\.compiling'/m);
    assert.match(run.stdout, /^state: completed$/m);
    assert.match(run.stdout, /^outcome: \{[^]*digest: 'sha256:[0-9a-f]{64}'/m);
  });
});
