import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { importsOf } from '../support/imports.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const FORBIDDEN = [
  /^node:/,
  /^(fs|path|os|child_process|worker_threads|crypto|net|http)$/,
  /^lmdb/,
  /^piscina/,
  /^execa/,
  /^better-sqlite3/,
  /\/(store|kernel|frontier|views|drivers|runtime|cli|host|readsets)(\/|$)/,
];

describe('machines/ purity', () => {
  it('imports nothing that performs I/O and nothing of store, kernel, frontier, views, drivers or runtime', () => {
    const dir = join(root, 'machines');
    const offenders: string[] = [];
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      for (const spec of importsOf(readFileSync(join(dir, file), 'utf8'))) {
        if (FORBIDDEN.some((re) => re.test(spec))) offenders.push(`${file} imports ${spec}`);
      }
    }
    assert.deepEqual(offenders, []);
  });

  it('imports no package but xstate and zod (the Task event schemas are zod objects)', () => {
    const dir = join(root, 'machines');
    const packages = new Set<string>();
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts')))
      for (const spec of importsOf(readFileSync(join(dir, file), 'utf8')))
        if (!spec.startsWith('.')) packages.add(spec);
    assert.deepEqual(
      [...packages].filter((p) => !/^xstate(\/|$)/.test(p) && p !== 'zod'),
      [],
    );
  });

  it('the import scanner catches each forbidden form', () => {
    const sample = `import { x } from 'node:fs';\nexport * from "../store/index.js";\nconst m = await import('lmdb');\nimport 'execa';`;
    assert.deepEqual(importsOf(sample), ['node:fs', '../store/index.js', 'lmdb', 'execa']);
    assert.ok(importsOf(sample).every((s) => FORBIDDEN.some((re) => re.test(s))));
  });
});
