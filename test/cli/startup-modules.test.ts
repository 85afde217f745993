import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { TaskSpec } from '../../objects/index.js';
import { GLOBAL_FLAGS, schemaOf, type Flags } from '../../cli/command.js';
import { absent } from '../../cli/command-usage.js';
import { ordivonProgram } from '../../cli/ordivon.js';
import { SPEC_FIELDS } from '../../cli/spec-fields.js';
import { versionOf } from '../../cli/version.js';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';
import { CLI } from './run-fixture.js';

/** The packages a usage or the version must not load: the schema and storage libraries, the Host's runtime. */
const HEAVY = ['zod', 'ajv', 'lmdb', 'execa', 'pg', 'piscina', 'xstate'];

/**
 * A resolve hook (module.register) that appends every URL a process resolves to the file named by
 * RECORD_IMPORTS, and the module that registers it with `node --import`.
 */
const hooks = tempDir('ordivon-imports-');
writeFileSync(
  join(hooks, 'hooks.mjs'),
  [
    "import { appendFileSync } from 'node:fs';",
    'export async function resolve(specifier, context, next) {',
    '  const resolved = await next(specifier, context);',
    "  appendFileSync(process.env.RECORD_IMPORTS, resolved.url + '\\n');",
    '  return resolved;',
    '}',
  ].join('\n'),
);
writeFileSync(
  join(hooks, 'register.mjs'),
  "import { register } from 'node:module';\nregister(new URL('./hooks.mjs', import.meta.url));\n",
);

let runs = 0;

/** Runs `ordivon ARGS` in a child process with the hook: its exit, stdout, stderr and the URLs it resolved. */
function cliLoading(args: string[], cwd = hooks) {
  const record = join(hooks, `imports-${++runs}.txt`);
  writeFileSync(record, '');
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(join(hooks, 'register.mjs')).href, CLI, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, RECORD_IMPORTS: record },
  });
  const urls = [...new Set(readFileSync(record, 'utf8').split('\n').filter(Boolean))];
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, urls };
}

/** The heavy packages among `urls`. */
function heavy(urls: string[]): string[] {
  return HEAVY.filter((name) => urls.some((url) => url.includes(`/node_modules/${name}/`)));
}

describe("ordivon's startup: a usage or the version loads only the command table", () => {
  for (const args of [['--help'], ['run', '--help'], ['serve', '--help'], ['--version'], ['help', 'task', 'create']])
    it(`ordivon ${args.join(' ')} loads no zod, ajv, lmdb, execa, pg, piscina or xstate`, () => {
      const r = cliLoading(args);
      assert.equal(r.status, 0, r.stderr);
      assert.notEqual(r.stdout.trim(), '');
      assert.ok(
        r.urls.some((url) => url.endsWith('/cli/ordivon.js')),
        'the hook recorded the CLI',
      );
      assert.deepEqual(heavy(r.urls), []);
    });

  it('a command that runs still loads them and works: task create, then list, on a new state root', () => {
    const dir = tempDir();
    const state = join(dir, 'state');
    const spec = join(dir, 'spec.json');
    writeFileSync(spec, JSON.stringify({ ...SPEC, taskId: 'startup-1' }));
    const created = cliLoading(['task', 'create', '--spec', spec, '--state', state, '--json'], dir);
    assert.equal(created.status, 0, created.stderr);
    const list = cliLoading(['list', '--state', state, '--json'], dir);
    assert.equal(list.status, 0, list.stderr);
    assert.match(list.stdout, /"startup-1"/);
    assert.deepEqual(
      ['zod', 'lmdb'].filter((name) => !heavy(list.urls).includes(name)),
      [],
      'the hook sees what a command loads',
    );
  });

  it("the CLI's own commands load no module of the lab (workloads/, bench/); the usage still lists demo and bench", () => {
    const dir = tempDir();
    const state = join(dir, 'state');
    const spec = join(dir, 'spec.json');
    writeFileSync(spec, JSON.stringify({ ...SPEC, taskId: 'startup-lab' }));
    assert.equal(cliLoading(['task', 'create', '--spec', spec, '--state', state], dir).status, 0);
    const lab = (urls: string[]) => urls.filter((url) => /\/dist\/(workloads|bench)\//.test(url));
    for (const args of [
      ['list', '--state', state],
      ['show', 'startup-lab', '--state', state, '--json'],
      ['run', '--help'],
      ['--version'],
    ]) {
      const r = cliLoading(args, dir);
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.deepEqual(lab(r.urls), [], `ordivon ${args.join(' ')}`);
    }
    const help = cliLoading(['--help']);
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /^ {2}demo\b[^]*^ {2}run\b[^]*^ {2}graph\b[^]*^ {2}bench\b/m, 'demo first, bench last');
    assert.ok(lab(help.urls).some((url) => url.endsWith('/bench/register.js')));
    const bench = cliLoading(['bench', '--help']);
    assert.equal(bench.status, 0, bench.stderr);
    assert.match(bench.stdout, /^usage: ordivon bench /);
  });

  it('a bad flag is still refused by its schema: usage, exit 2, the flag named', () => {
    const r = cliLoading(['serve', '--port', 'x', '--json']);
    assert.equal(r.status, 2);
    assert.deepEqual(JSON.parse(r.stderr.trim().split('\n').at(-1)!), {
      error: { code: 'usage', message: '--port: must be an integer 0-65535', path: '--port' },
    });
  });
});

describe('what the usage says without building the schemas', () => {
  it('every flag says of itself what its schema does when it is absent: required, or its default', async () => {
    const tables: Array<[string, Flags]> = [
      ['(global)', GLOBAL_FLAGS],
      ...(await ordivonProgram()).commands.map((c): [string, Flags] => [c.name, c.flags ?? {}]),
    ];
    for (const [command, flags] of tables)
      for (const [name, flag] of Object.entries(flags)) {
        const parsed = (await schemaOf(flag, z)).safeParse(undefined);
        // The usage shows a string flag's default (a boolean flag's is always false).
        const fromSchema = parsed.success
          ? { required: false, fallback: flag.type === 'string' ? parsed.data : undefined }
          : { required: true, fallback: undefined };
        assert.deepEqual(absent(flag), fromSchema, `${command} --${name}`);
      }
  });

  it("the spec's fields help lists are the schema's keys", () => {
    assert.deepEqual([...SPEC_FIELDS], Object.keys(TaskSpec.shape));
  });

  it("a lazy schema is built once, and ordivon's package.json is checked without zod", async () => {
    let builds = 0;
    const flag = { schema: () => (builds++, z.string()) };
    assert.equal(await schemaOf(flag, z), await schemaOf(flag, z));
    assert.equal(builds, 1);
    const plain = { schema: z.string() };
    assert.equal(await schemaOf(plain, z), plain.schema, 'a plain schema is taken as it is');
    assert.equal(versionOf('{"name":"ordivon","version":"1.2.3"}'), '1.2.3');
    assert.throws(() => versionOf('{"name":"ordivon"}'), /package\.json: version must be a non-empty string/);
    assert.throws(() => versionOf('{"name":"","version":"1"}'), /package\.json: name must be a non-empty string/);
  });
});
