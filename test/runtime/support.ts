import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { TestContext } from 'node:test';
import { createRuntime, type JobRecord, type Runtime, type RuntimeOptionsIn } from '../../runtime/index.js';

/** A fresh temp directory with a `ws/` workspace inside, removed when the test ends. */
export function tempRoot(t: TestContext): { dir: string; state: string; ws: string } {
  const dir = mkdtempSync(join(tmpdir(), 'ordivon-runtime-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const ws = join(dir, 'ws');
  mkdirSync(ws);
  return { dir, state: join(dir, 'state'), ws };
}

/** Opens a Runtime that is closed when the test ends (after its jobs are stopped). */
export async function openRuntime(t: TestContext, options: RuntimeOptionsIn): Promise<Runtime> {
  const runtime = await createRuntime(options);
  t.after(() => runtime.close());
  return runtime;
}

/** Resolves with the first durable record write that satisfies `predicate`. */
export function nextRecord(runtime: Runtime, predicate: (record: JobRecord) => boolean): Promise<JobRecord> {
  return new Promise((resolve) => {
    const stop = runtime.subscribe((record) => {
      if (!predicate(record)) return;
      stop();
      resolve(record);
    });
  });
}

/** The errno code of `process.kill(pid, 0)`, or `'alive'`. Use a negative pid for a group. */
export function killZero(pid: number): string {
  try {
    process.kill(pid, 0);
    return 'alive';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'unknown';
  }
}

/** Resolves once `path` exists, woken by directory events rather than a timer. */
export function waitForFile(path: string): Promise<void> {
  return new Promise((resolve) => {
    const watcher = watch(dirname(path), (_event, name) => {
      if ((name === null || name === basename(path)) && existsSync(path)) {
        watcher.close();
        resolve();
      }
    });
    if (existsSync(path)) {
      watcher.close();
      resolve();
    }
  });
}

export function sha256(data: string | Buffer): string {
  return 'sha256:' + createHash('sha256').update(data).digest('hex');
}

/** A fixed clock: every recorded timestamp is this instant, so records are deterministic. */
export const FIXED_CLOCK = (): number => Date.parse('2026-01-02T03:04:05.000Z');
