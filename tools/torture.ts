#!/usr/bin/env node
/**
 * `npm run torture`: the long variant of the crash loop (test/reliability/crash-loop.test.ts).
 * Spawns the writer ROUNDS times on one fresh state root, SIGKILLs it at a seeded random line
 * count, boots a fresh supervisor after each kill and checks that no acknowledged event is lost.
 * Prints a summary; exit 1 if anything was lost or any boot failed.
 *
 * `npm run torture -- --cluster`: the long variant of the cluster torture
 * (test/reliability/cluster-torture.test.ts): three Host processes on one PostgreSQL database
 * (a server of its own, or `--store URL`, an empty database), one fault a round (SIGKILL, SIGSTOP
 * past the lease, a blackholed connection, every connection of a Host reset); exit 1 on any
 * acknowledged event lost, Task with two outcomes, write accepted from a lapsed lease, Host that
 * exited on its own, Task not held by a live Host, or other problem.
 * `--json FILE` also writes the summary there.
 *
 * usage: node dist/tools/torture.js [--rounds N] [--seed N] [--tasks N] [--keep]
 *        node dist/tools/torture.js --cluster [--rounds N] [--seed N] [--tasks N] [--store URL] [--json FILE] [--keep]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { scriptArgsOrExit } from '../cli/cli-io.js';
import { z } from 'zod';
import { runCrashLoop } from '../test/reliability/crash-loop.js';
import {
  CLUSTER_TORTURE_DEFAULTS,
  runClusterTorture,
  type ClusterTortureSummary,
} from '../test/reliability/cluster-torture.js';

const USAGE = [
  'usage: node dist/tools/torture.js [--rounds N] [--seed N] [--tasks N] [--keep]  (N: positive integers)',
  '       node dist/tools/torture.js --cluster [--rounds N] [--seed N] [--tasks N] [--store URL] [--json FILE] [--keep]',
].join('\n');
const Args = z.object({
  cluster: z.boolean().default(false),
  rounds: z.coerce.number().int().positive().optional(),
  seed: z.coerce.number().int().positive(),
  tasks: z.coerce.number().int().positive().optional(),
  store: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'expected a postgres:// URL')
    .optional(),
  json: z.string().min(1).optional(),
  keep: z.boolean().default(false),
  help: z.boolean().default(false),
});

const args = scriptArgsOrExit(
  'torture',
  USAGE,
  process.argv.slice(2),
  {
    cluster: { type: 'boolean' },
    rounds: { type: 'string' },
    seed: { type: 'string', default: '7' },
    tasks: { type: 'string' },
    store: { type: 'string' },
    json: { type: 'string' },
    keep: { type: 'boolean' },
  },
  Args,
);
const dir = mkdtempSync(join(tmpdir(), 'ordivon-torture-'));
const started = Date.now();
// The machine may be shared: the load when the run began goes into the cluster results beside its figures.
const loadAtStart = loadavg()[0]!;
const elapsed = () => ((Date.now() - started) / 1000).toFixed(1);
try {
  process.exitCode = args.cluster ? await cluster() : await crashLoop();
} finally {
  if (args.keep) console.log(`state kept at ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}

async function crashLoop(): Promise<number> {
  const { seed } = args;
  const rounds = args.rounds ?? 200;
  const tasks = args.tasks ?? 20;
  const summary = await runCrashLoop({
    root: join(dir, 'state'),
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
  console.log(
    [
      'torture summary',
      `  rounds:               ${summary.rounds}`,
      `  kills (SIGKILL):      ${summary.kills}`,
      `  events acknowledged:  ${summary.acknowledged}`,
      `  events lost:          ${summary.lost}`,
      `  events stored:        ${summary.events} in ${summary.tasks} tasks`,
      `  boot / replay issues: ${summary.problems.length}`,
      `  seed ${seed}, ${tasks} concurrent tasks, ${elapsed()} s`,
    ].join('\n'),
  );
  for (const p of summary.problems.slice(0, 20)) console.log(`  ! ${p}`);
  return summary.problems.length === 0 && summary.lost === 0 && summary.kills === summary.rounds ? 0 : 1;
}

async function cluster(): Promise<number> {
  const { seed } = args;
  const rounds = args.rounds ?? 30;
  const tasks = args.tasks ?? CLUSTER_TORTURE_DEFAULTS.tasks;
  const summary = await runClusterTorture({
    rounds,
    seed,
    tasks,
    dir,
    ...(args.store ? { url: args.store } : {}),
    onRound: (r) =>
      console.log(
        `round ${r.round}/${rounds} (${elapsed()} s): ${r.fault} ${r.hostId}, which held ${r.held} Tasks; ${r.takenOver} taken over; ${r.acknowledged} acknowledged`,
      ),
  });
  const seconds = Number(elapsed());
  console.log(
    [
      'cluster torture summary',
      `  rounds:                      ${summary.rounds} (${summary.kills} SIGKILL, ${summary.pauses} SIGSTOP past the lease, ${summary.blackholes} blackholed, ${summary.resets} connections reset)`,
      `  Tasks taken over:            ${summary.takeovers}`,
      `  events acknowledged:         ${summary.acknowledged}`,
      `  lost:                        ${summary.lost}`,
      `  double outcomes:             ${summary.doubleOutcomes}`,
      `  fenced writes accepted:      ${summary.fencedAccepted}`,
      `  refused lease_lost:          ${summary.leaseLostRefusals} (${summary.refusedAfterResume} by a resumed or healed Host)`,
      `  Tasks not held by a live Host: ${summary.unowned}`,
      `  Hosts that exited on their own: ${summary.unexpectedExits}`,
      `  events stored:               ${summary.events} in ${summary.tasks} Tasks`,
      `  other problems:              ${summary.problems.length}`,
      `  seed ${seed}, 3 Hosts × ${tasks} lanes, ${seconds} s`,
    ].join('\n'),
  );
  for (const p of summary.problems.slice(0, 20)) console.log(`  ! ${p}`);
  if (args.json) writeFileSync(args.json, JSON.stringify(clusterResult(summary, seconds, tasks), null, 2) + '\n');
  const zero = [
    summary.lost,
    summary.doubleOutcomes,
    summary.fencedAccepted,
    summary.unowned,
    summary.unexpectedExits,
    summary.problems.length,
  ];
  const faults = summary.kills + summary.pauses + summary.blackholes + summary.resets;
  return zero.every((n) => n === 0) && faults === rounds ? 0 : 1;
}

function clusterResult(summary: ClusterTortureSummary, seconds: number, tasks: number) {
  return {
    kind: 'cluster-torture',
    date: new Date().toISOString(),
    command: `npm run torture -- ${process.argv.slice(2).join(' ')}`,
    seed: args.seed,
    hosts: 3,
    lanesPerHost: tasks,
    leaseMs: CLUSTER_TORTURE_DEFAULTS.leaseMs,
    renewEveryMs: CLUSTER_TORTURE_DEFAULTS.renewEveryMs,
    statementTimeoutMs: CLUSTER_TORTURE_DEFAULTS.statementTimeoutMs,
    seconds,
    machine: {
      cores: availableParallelism(),
      node: process.version,
      loadAverage1m: { atStart: round2(loadAtStart), atEnd: round2(loadavg()[0]!) },
    },
    summary,
  };
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
