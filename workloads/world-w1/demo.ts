import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { emitReport, type Io } from '../../scripts/cli-io.js';
import { startProvider, type ProviderProcess } from './provider/index.js';
import { resultRow, runBaseline, type W1ResultRow, type W1Variant } from './baselines/index.js';
import { W1_TRAJECTORIES, type W1Trajectory } from './host-path/faults.js';
import { runHostPath } from './host-path/sequence.js';
import { providerSurface } from './host-path/provider-surface.js';
import type { HostPathOutcome } from './host-path/run.js';
import { expectationsOf, summarise, tableOf, W1_VARIANTS } from './compare/table.js';
import { runW1Continuation, w1ContinuationText } from './continuation/run.js';
import type { AcpAgent } from '../shared/harnesses.js';

/** The source tree (lines of code are counted in the .ts a user keeps, not in dist/). */
const SOURCE = fileURLToPath(new URL('../../../workloads/world-w1/', import.meta.url));

/** The code each variant needs beside the provider (the Host itself is the product's, not counted). */
const PERMANENT_CODE: Record<W1Variant, string[]> = {
  'a-retry': ['baselines/baselines.ts'],
  'b-key': ['baselines/baselines.ts'],
  'c-lookup': ['baselines/baselines.ts'],
  'd-host': ['host-path/spec.ts', 'provider/adapter-config.ts'],
};

/** Non-blank lines that are not only a comment. */
function linesOf(files: readonly string[]): number {
  return files
    .map((file) => readFileSync(join(SOURCE, file), 'utf8').split('\n'))
    .flat()
    .filter((line) => {
      const t = line.trim();
      return t !== '' && !t.startsWith('//') && !t.startsWith('*') && !t.startsWith('/*');
    }).length;
}

/** What the Host concluded, from the Task's rest: the Effect's status, a question put to an operator, a refusal. */
function outcomeOf(outcome: HostPathOutcome): W1ResultRow['outcome'] {
  if (outcome.effect === 'recorded') return 'succeeded';
  if (outcome.state === 'effect_unknown.held') return 'asked';
  if (outcome.intents === 0 && outcome.refusals.includes('effect_endpoint_changed')) return 'refused';
  return 'failed';
}

/** The Host path's outcome as a row of the comparison. */
function hostRow(trajectory: W1Trajectory, outcome: HostPathOutcome): W1ResultRow {
  return resultRow(
    {
      variant: 'd-host',
      operation: trajectory.operation,
      fault: trajectory.fault,
      outcome: outcomeOf(outcome),
      sends: outcome.intents,
      unsafeRedispatches: Math.max(0, outcome.intents - 1),
      staleEvidenceUsed: outcome.staleRecords,
      operatorInterventions: outcome.operatorRequests,
      elapsedMs: outcome.elapsedMs,
      stateObjects: outcome.stateObjects,
    },
    outcome.performs,
  );
}

async function withProvider<T>(dir: string, run: (provider: ProviderProcess) => Promise<T>): Promise<T> {
  mkdirSync(dir, { recursive: true });
  const provider = await startProvider({ dir, identity: 'w1-provider-key' });
  try {
    return await run(provider);
  } finally {
    await provider.stop();
  }
}

export interface WorldW1Options {
  state: string;
  fresh: boolean;
  /** Trajectory names to run, and `continuation` (all when undefined). */
  only?: string[] | undefined;
  /** The ACP agent of the continuation (`--acp-agent`). */
  acpAgent: AcpAgent;
}

/**
 * `ordivon demo --workload world-w1`: every trajectory under each of the four variants, each
 * variant against a provider process of its own (its own records file, which every count is read
 * from), then replacement after loss with real agents (continuation/). Prints the table and the
 * continuation (`--json`: the results), writes `world-w1-results.json` in the state root, and
 * exits 0 only if every expectation holds, else `demo_failed` naming each that did not
 * (docs/world-w1.md).
 */
export async function worldW1Demo(options: WorldW1Options, io: Io): Promise<number> {
  if (options.fresh) rmSync(options.state, { recursive: true, force: true });
  mkdirSync(options.state, { recursive: true });
  const trajectories: readonly W1Trajectory[] = options.only
    ? W1_TRAJECTORIES.filter((t) => options.only!.includes(t.name))
    : W1_TRAJECTORIES;
  const withContinuation = options.only === undefined || options.only.includes('continuation');
  const say = (line: string) => io.err(line);
  say(
    `ordivon demo: world-w1 on ${options.state}; ${trajectories.length} trajectories × ${W1_VARIANTS.length} variants${withContinuation ? '; replacement after loss' : ''}`,
  );
  const rows: W1ResultRow[] = [];
  for (const variant of trajectories.length > 0 ? W1_VARIANTS : []) {
    await withProvider(join(options.state, `provider-${variant}`), async (provider) => {
      if (variant === 'd-host') {
        const outcomes = await runHostPath(join(options.state, 'host'), providerSurface(provider), trajectories, say);
        outcomes.forEach((outcome, i) => rows.push(hostRow(trajectories[i]!, outcome)));
        return;
      }
      for (const trajectory of trajectories) {
        say(`  ${variant}: ${trajectory.name}`);
        rows.push(await runBaseline({ provider }, variant, trajectory.operation, trajectory.fault));
      }
    });
  }
  const continuation = withContinuation ? await runW1Continuation(options.state, options.acpAgent, say) : undefined;
  const summary = summarise(rows, (variant) => linesOf(PERMANENT_CODE[variant]));
  const failed = [
    ...expectationsOf(rows, trajectories),
    ...(continuation?.expectations ?? [])
      .filter((e) => !e.held)
      .map((e) => `continuation ${e.scenario}: ${e.what} (observed ${e.observed})`),
  ];
  const file = join(options.state, 'world-w1-results.json');
  const results = {
    workload: 'world-w1',
    at: new Date().toISOString(),
    summary,
    rows,
    ...(continuation ? { continuation } : {}),
    failed,
  };
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  const human = () =>
    [
      ...(rows.length > 0 ? tableOf(summary) : []),
      ...(continuation ? w1ContinuationText(continuation) : []),
      ...failed.map((failure) => `expectation failed: ${failure}`),
      failed.length === 0
        ? `world-w1: every expectation held (results: ${file})`
        : `world-w1: ${failed.length} expectation(s) failed (results: ${file})`,
    ].join('\n');
  return emitReport(
    io,
    { ...results, results: file },
    human,
    failed.length === 0
      ? undefined
      : { code: 'demo_failed', message: `${failed.length} expectation(s) did not hold: ${failed.join('; ')}` },
  );
}
