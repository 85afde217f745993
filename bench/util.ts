import { cpus, totalmem } from 'node:os';
import { Bench } from 'tinybench';
import { z } from 'zod';
import { scriptArgsOrExit } from '../cli/cli-io.js';
import type { BenchRow, Size } from './report/results-model.js';

/** Shared builders of the benchmark suites: a seeded PRNG, a timing harness on tinybench, machine facts. */

/** A small seeded PRNG (mulberry32): the same seed gives the same workload on every store. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Hex digits from a PRNG, for ids and artifact bytes that must repeat across stores. */
export function randomHex(random: () => number, length: number): string {
  let out = '';
  while (out.length < length)
    out += Math.floor(random() * 0x100000000)
      .toString(16)
      .padStart(8, '0');
  return out.slice(0, length);
}

export interface Timing {
  /** Median of the timed iterations, in milliseconds. */
  medianMs: number;
  minMs: number;
  maxMs: number;
  iterations: number;
}

/**
 * Times a multi-second operation with tinybench: `iterations` timed runs (no time budget, no
 * warm-up unless asked), `prepare` before each run outside the timed window. The task may return
 * its own measured duration (`overriddenDuration`) when only part of it is the operation.
 */
export async function timeIt(
  name: string,
  fn: () => Promise<number | void> | number | void,
  options: {
    iterations: number;
    warmup?: boolean;
    prepare?: () => Promise<void> | void;
    cleanup?: () => Promise<void> | void;
  },
): Promise<Timing> {
  const bench = new Bench({
    iterations: options.iterations,
    time: 0,
    warmup: options.warmup ?? false,
    warmupIterations: 1,
    warmupTime: 0,
    throws: true,
  });
  bench.add(
    name,
    async () => {
      const measured = await fn();
      return typeof measured === 'number' ? { overriddenDuration: measured } : undefined;
    },
    {
      ...(options.prepare ? { beforeEach: async () => void (await options.prepare!()) } : {}),
      ...(options.cleanup ? { afterEach: async () => void (await options.cleanup!()) } : {}),
    },
  );
  await bench.run();
  const task = bench.tasks[0]!;
  const result = task.result;
  if (result.state !== 'completed')
    throw new Error(`${name}: ${result.state}${'error' in result ? `: ${String(result.error)}` : ''}`);
  return {
    medianMs: result.latency.p50,
    minMs: result.latency.min,
    maxMs: result.latency.max,
    iterations: result.latency.samplesCount,
  };
}

/** A row timing a whole history of `size` (Tasks × events per Task), with its events/s. */
export function historyRow(
  scenario: BenchRow['scenario'],
  name: string,
  size: Size,
  t: Timing,
  detail?: BenchRow['detail'],
): BenchRow {
  const events = size.tasks * size.events;
  return {
    scenario,
    name,
    tasks: size.tasks,
    events,
    ...t,
    rate: events / (t.medianMs / 1000),
    rateUnit: 'events/s',
    ...(detail ? { detail } : {}),
  };
}

/** A row timing a whole given history (`tasks` Tasks, `events` events in all), with its events/s. */
export function totalsRow(
  scenario: BenchRow['scenario'],
  name: string,
  totals: { tasks: number; events: number },
  t: Timing,
  detail?: BenchRow['detail'],
): BenchRow {
  return {
    scenario,
    name,
    tasks: totals.tasks,
    events: totals.events,
    ...t,
    rate: totals.events / (t.medianMs / 1000),
    rateUnit: 'events/s',
    ...(detail ? { detail } : {}),
  };
}

/** The machine the figures were measured on, stated with every result. */
export function machine(): { cpus: number; model: string; memoryGiB: number; node: string; platform: string } {
  const list = cpus();
  return {
    cpus: list.length,
    model: list[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
  };
}

export function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(ms >= 100 ? 0 : 1)} ms`;
}

const ScenarioArgs = z.object({
  quick: z.boolean().default(false),
  json: z.boolean().default(false),
  help: z.boolean().default(false),
});

/**
 * Options of one scenario file run on its own (`node dist/bench/<file>.js [--quick]`), parsed as
 * the runner's are: an unknown option exits 2 naming it, before anything runs. `--json` only where
 * the file offers it.
 */
export function scenarioArgs(
  file: string,
  argv: string[] = process.argv.slice(2),
  withJson = false,
): { quick: boolean; json: boolean } {
  const usage = `usage: node dist/bench/${file}.js [--quick]${withJson ? ' [--json]' : ''}`;
  return scriptArgsOrExit(
    file,
    usage,
    argv,
    { quick: { type: 'boolean' }, ...(withJson ? { json: { type: 'boolean' } } : {}) },
    ScenarioArgs,
  );
}
