import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

/**
 * The Host carries anybody's agent work: no code outside the workloads, the examples and the tests
 * knows the demo workload's stages, artifacts or name. Documentation (Markdown) may describe the
 * demo; lockfiles name packages; a committed results file (`bench/results/`) records a run of a
 * workload, as data.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ALLOWED_TOP = new Set(['workloads', 'examples', 'test', 'node_modules', 'dist', '.git', '.agents', '.ordivon']);
const DEMO_NAMES = /diagnose|repair|diagnosis\.json|completion\.json|hamilton/i;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (dir === ROOT && ALLOWED_TOP.has(entry.name)) return [];
    if (relative(ROOT, path) === join('bench', 'results')) return [];
    if (entry.isDirectory()) return files(path);
    if (entry.name.endsWith('.md') || entry.name === 'package-lock.json') return [];
    return [path];
  });
}

describe('workload neutrality', () => {
  it('no file outside workloads/, examples/ and test/ names the demo workload, its stages or its artifacts', () => {
    const offenders: string[] = [];
    for (const file of files(ROOT)) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (DEMO_NAMES.test(line))
            offenders.push(`${relative(ROOT, file).split(sep).join('/')}:${i + 1}: ${line.trim()}`);
        });
    }
    assert.deepEqual(offenders, []);
  });
});
