import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** The pages whose figures must point at committed results: the README, docs/*.md and bench/README.md. */
function pages(): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', 'bench/README.md', ...docs];
}

/** Every concrete results file a text names (`bench/results/<name>.json|.svg`; `<date>` placeholders are not names). */
function resultsFilesNamed(text: string): string[] {
  return [...text.matchAll(/bench\/results\/[\w.-]+?\.(?:json|svg)\b/g)].map((m) => m[0]);
}

/** Every run timestamp a text mentions (`2026-12-01T17-22-36Z`), each of which must be a committed results file. */
function runStampsNamed(text: string): string[] {
  return [...text.matchAll(/\b\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z\b/g)].map((m) => m[0]);
}

/**
 * The first measured-looking figure in a text: a number with a unit of time, rate, ratio or size
 * (`9.66 s`, `16.7 µs`, `13,209/s`, `3.58×`, `656 MiB`), or undefined. Design constants written
 * without a unit ("default 100 events") do not count.
 */
function firstFigure(text: string): string | undefined {
  return /\d[\d,]*(?:\.\d+)?\s?(?:ms|µs|min|s|×|\/s|MiB|GiB|MB|GB|kB)(?![\w])/u.exec(text)?.[0];
}

describe('figures in the README and docs/', () => {
  it('the checks find a missing results file, an unknown run and an unsourced figure', () => {
    const text = 'boot 9.66 s (`bench/results/1999-01-01T00-00-00Z.json`, beside `1999-01-02T00-00-00Z`)';
    assert.deepEqual(resultsFilesNamed(text), ['bench/results/1999-01-01T00-00-00Z.json']);
    assert.equal(existsSync(join(root, resultsFilesNamed(text)[0]!)), false);
    assert.deepEqual(runStampsNamed(text), ['1999-01-01T00-00-00Z', '1999-01-02T00-00-00Z']);
    assert.equal(firstFigure('admission 13,209/s through the supervisor'), '13,209/s');
    assert.equal(firstFigure('default 100 events per checkpoint, 10,000 events per stream'), undefined);
    assert.deepEqual(resultsFilesNamed('writes `bench/results/<date>.json` and `recovery-<date>.svg`'), []);
  });

  for (const page of pages()) {
    const text = readFileSync(join(root, page), 'utf8');

    it(`${page}: every results file it names is committed`, () => {
      const missing = resultsFilesNamed(text).filter((path) => !existsSync(join(root, path)));
      assert.deepEqual(missing, [], `${page} names results files that are not in the repository`);
      // A run is a results file named by its stamp: `<stamp>.json` (npm run bench) or `<what>-<stamp>.json` (a demo's).
      const results = readdirSync(join(root, 'bench', 'results'));
      const unknown = runStampsNamed(text).filter(
        (stamp) => !results.some((name) => name === `${stamp}.json` || name.endsWith(`-${stamp}.json`)),
      );
      assert.deepEqual(unknown, [], `${page} mentions runs with no results file in bench/results/`);
    });

    it(`${page}: quotes figures only beside the results file they come from`, () => {
      const figure = firstFigure(text);
      if (figure === undefined) return;
      assert.ok(
        resultsFilesNamed(text).some((path) => path.endsWith('.json')),
        `${page} quotes "${figure}" but names no bench/results/<date>.json`,
      );
    });
  }
});
