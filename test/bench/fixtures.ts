import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { generateRoot, type Target } from '../../bench/generate.js';
import { canonicalJson } from '../../store/index.js';
import { taskMachine } from '../../machines/index.js';
import type { RecoveryReport } from '../../recovery/rebuild.js';
import { tempDir } from '../support/temp.js';

/** One private generator cache per test process: tests never share (or race on) the bench cache. */
const cache = tempDir('ordivon-test-bench-cache-');

/** A generated, healthy history of the benchmark workload (generated once per process and size). */
export async function generated(tasks: number, events: number, target: Target = 'lmdb'): Promise<string> {
  return (await generateRoot({ tasks, events, target, cacheDir: cache, seed: 11 })).root;
}

/** A private copy of a generated root, to boot (which writes checkpoints) or damage. */
export async function copyOf(tasks: number, events: number): Promise<string> {
  const root = join(tempDir(), 'state');
  cpSync(await generated(tasks, events), root, { recursive: true });
  return root;
}

/** Task id → canonical persisted snapshot and revision, to compare two recoveries. */
export function finalStates(report: RecoveryReport): Map<string, string> {
  return new Map(
    report.tasks.map((t) => [
      t.taskId,
      canonicalJson({ revision: t.revision, snapshot: taskMachine.getPersistedSnapshot(t.snapshot) }),
    ]),
  );
}

/** Findings reduced to what tests compare: code, Task, revision and object. */
export function named(report: RecoveryReport): string[] {
  return report.findings.map((f) => `${f.code} ${f.taskId ?? '-'} ${f.revision ?? '-'} ${f.object ?? '-'}`);
}
