import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { tempDir } from './support/temp.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const depcruise = join(root, 'node_modules', '.bin', 'depcruise');

/**
 * Runs the project's import rules (the config `npm run lint:imports` uses) over `paths` in `cwd`:
 * its exit code and each violation it reports, as `rule: from-file`.
 */
async function violations(cwd: string, paths: string[]): Promise<{ exitCode: number; found: string[] }> {
  const result = await execa(
    depcruise,
    ['--config', join(root, '.dependency-cruiser.cjs'), '--output-type', 'err', ...paths],
    {
      cwd,
      reject: false,
    },
  );
  const found = [...result.stdout.matchAll(/^\s*error ([\w-]+): (\S+)/gm)].map((m) => `${m[1]}: ${m[2]}`).sort();
  return { exitCode: result.exitCode ?? -1, found };
}

function plant(dir: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

/** The folders and files `npm run lint:imports` checks, as package.json names them (after the config). */
function linted(): string[] {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const args = pkg.scripts['lint:imports']!.split(/\s+/);
  return args.slice(args.indexOf('--config') + 2);
}

describe('the import rules of npm run lint', () => {
  it('hold for the tree as it is', async () => {
    const paths = linted();
    assert.ok(paths.includes('adapters') && paths.includes('index.ts'), paths.join(' '));
    const { exitCode, found } = await violations(root, paths);
    assert.deepEqual(found, []);
    assert.equal(exitCode, 0);
  });

  it('fail on a planted import cycle, a folder rule broken, an import that bypasses a barrel (in a product folder, the CLI or a workload) and an adapter loading the Host', async () => {
    const dir = tempDir('ordivon-lint-');
    plant(dir, {
      'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext' } }),
      // A cycle between two files of one folder, one edge type-only.
      'kernel/a.ts': "import type { B } from './b.js';\nexport type A = { b?: B };\n",
      'kernel/b.ts':
        "import { store } from '../store/index.js';\nimport type { A } from './a.js';\nexport type B = { a?: A; s: typeof store };\n",
      // The store behind its barrel, and a module that is no door.
      'store/index.ts': "export { store } from './deep.js';\n",
      'store/deep.ts': 'export const store = 1;\n',
      'kernel/deep-user.ts': "import { store } from '../store/deep.js';\nexport const n = store;\n",
      // machines/ may import no other folder of the project; kernel/ not the Runtime.
      'machines/impure.ts': "import { store } from '../store/index.js';\nexport const m = store;\n",
      'runtime/index.ts': 'export const runtime = 1;\n',
      'kernel/uses-runtime.ts': "import { runtime } from '../runtime/index.js';\nexport const r = runtime;\n",
      // The CLI is held to the doors as the product folders are.
      'cli/deep-cli.ts': "import { store } from '../store/deep.js';\nexport const c = store;\n",
      // The CLI may import no workload (the workloads register with it).
      'workloads/demo.ts': 'export const demo = 1;\n',
      'cli/cli.ts': "import { demo } from '../workloads/demo.js';\nexport const d = demo;\n",
      // Nor a benchmark (they register with it too).
      'bench/scenarios.ts': "export const scenarios = ['recovery'];\n",
      'cli/bench-command.ts': "import { scenarios } from '../bench/scenarios.js';\nexport const s = scenarios;\n",
      // A workload is a user of the doors too.
      'workloads/deep-workload.ts': "import { store } from '../store/deep.js';\nexport const w = store;\n",
      // An Effect adapter takes the frontier's types, never a value (which would load the whole Host).
      'frontier/index.ts': 'export const host = 1;\nexport type Adapter = { id: string };\n',
      'adapters/typed.ts':
        "import type { Adapter } from '../frontier/index.js';\nexport const a: Adapter = { id: 'a' };\n",
      'adapters/loads-host.ts': "import { host } from '../frontier/index.js';\nexport const h = host;\n",
    });
    const { exitCode, found } = await violations(dir, [
      'adapters',
      'frontier',
      'kernel',
      'store',
      'machines',
      'runtime',
      'cli',
      'workloads',
      'bench',
    ]);
    assert.notEqual(exitCode, 0);
    assert.deepEqual(found, [
      'adapters-frontier-types: adapters/loads-host.ts',
      'cli-no-lab: cli/bench-command.ts',
      'cli-no-lab: cli/cli.ts',
      'folder-kernel: kernel/uses-runtime.ts',
      'folder-machines: machines/impure.ts',
      'no-circular: kernel/a.ts',
      'through-door: cli/deep-cli.ts',
      'through-door: kernel/deep-user.ts',
      'through-door: workloads/deep-workload.ts',
    ]);
  });
});
