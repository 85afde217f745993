#!/usr/bin/env node
// Runs every compiled test file under dist/test with node:test.
// Node 20's `--test` takes no globs, so the file list is gathered here.
// Usage: npm test [-- <substring filter>...]
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const testRoot = join(root, 'dist', 'test');
const filters = process.argv.slice(2);

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'fixtures' ? [] : walk(path);
    return name.endsWith('.test.js') ? [path] : [];
  });
}

const files = walk(testRoot)
  .filter((f) => filters.length === 0 || filters.some((s) => relative(root, f).includes(s)))
  .sort();
if (files.length === 0) {
  console.error(`no test files under ${relative(root, testRoot)} match ${filters.join(' ') || '*'}`);
  process.exit(1);
}
const concurrency = process.env.ORDIVON_TEST_CONCURRENCY ?? '2';
const result = spawnSync(process.execPath, ['--test', `--test-concurrency=${concurrency}`, ...files], {
  stdio: 'inherit',
  cwd: root,
});
process.exit(result.status ?? 1);
