#!/usr/bin/env node
// Runs every compiled test file under dist/test with node:test.
// Node 20's `--test` takes no globs, so the file list is gathered here.
// Usage: npm test [-- <substring filter>...]
// ORDIVON_TEST_CONCURRENCY: files at once (default 2); ORDIVON_TEST_FILE_TIMEOUT_MS: see below.
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
// Each file runs in a process of its own; node:test kills one that outlives this limit and reports
// it failed. Without it, a file whose test was cancelled but left a handle open (a child it waits
// on, a FIFO open blocked in the thread pool) never exits, and the run waits for it forever. It is
// also the limit of every test that sets none. The slowest file takes about four minutes on two
// cores; the longest limit a test sets is fifteen.
const fileTimeoutMs = process.env.ORDIVON_TEST_FILE_TIMEOUT_MS ?? String(20 * 60_000);
const args = ['--test', `--test-concurrency=${concurrency}`, `--test-timeout=${fileTimeoutMs}`, ...files];
const result = spawnSync(process.execPath, args, {
  stdio: 'inherit',
  cwd: root,
});
process.exit(result.status ?? 1);
