#!/usr/bin/env node
/**
 * `npm run torture`: the long variant of the crash loop (test/reliability/crash-loop.test.ts).
 * Spawns the writer ROUNDS times on one fresh state root, SIGKILLs it at a seeded random line
 * count, boots a fresh supervisor after each kill and checks that no acknowledged event is lost.
 * Prints a summary; exit 1 if anything was lost or any boot failed.
 *
 * usage: node dist/scripts/torture.js [--rounds N] [--seed N] [--tasks N] [--keep]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scriptArgsOrExit } from './cli-io.js';
import { z } from 'zod';
import { runCrashLoop } from '../test/reliability/crash-loop.js';

const USAGE =
  'usage: node dist/scripts/torture.js [--rounds N] [--seed N] [--tasks N] [--keep]  (N: positive integers)';
const Args = z.object({
  rounds: z.coerce.number().int().positive(),
  seed: z.coerce.number().int().positive(),
  tasks: z.coerce.number().int().positive(),
  keep: z.boolean().default(false),
  help: z.boolean().default(false),
});

const args = scriptArgsOrExit(
  'torture',
  USAGE,
  process.argv.slice(2),
  {
    rounds: { type: 'string', default: '200' },
    seed: { type: 'string', default: '7' },
    tasks: { type: 'string', default: '20' },
    keep: { type: 'boolean' },
  },
  Args,
);
const { rounds, seed, tasks, keep } = args;
const dir = mkdtempSync(join(tmpdir(), 'ordivon-torture-'));
const root = join(dir, 'state');
const started = Date.now();
try {
  const summary = await runCrashLoop({
    root,
    rounds,
    seed,
    tasks,
    onRound: (r) => {
      if (r.round % 10 === 0 || r.lost.length || r.problems.length) {
        console.log(
          `round ${r.round}/${rounds}: killed after ${r.killAt} lines; ${r.acknowledged} acknowledged, ${r.lost.length} lost; ${r.events} events in ${r.tasks} tasks`,
        );
      }
    },
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(
    [
      'torture summary',
      `  rounds:               ${summary.rounds}`,
      `  kills (SIGKILL):      ${summary.kills}`,
      `  events acknowledged:  ${summary.acknowledged}`,
      `  events lost:          ${summary.lost}`,
      `  events stored:        ${summary.events} in ${summary.tasks} tasks`,
      `  boot / replay issues: ${summary.problems.length}`,
      `  seed ${seed}, ${tasks} concurrent tasks, ${seconds} s`,
    ].join('\n'),
  );
  for (const p of summary.problems.slice(0, 20)) console.log(`  ! ${p}`);
  process.exitCode = summary.problems.length === 0 && summary.lost === 0 && summary.kills === summary.rounds ? 0 : 1;
} finally {
  if (keep) console.log(`state root kept at ${root}`);
  else rmSync(dir, { recursive: true, force: true });
}
