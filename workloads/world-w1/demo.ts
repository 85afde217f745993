import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { emitReport, type Io } from '../../cli/cli-io.js';
import { startProvider, type ProviderProcess } from './provider/index.js';
import { findChromium, startWebapp, webappAdapters } from './webapp/index.js';
import {
  BROWSER_BASELINE_VARIANTS,
  resultRow,
  runBaseline,
  runBrowserBaseline,
  type W1ResultRow,
  type W1Surface,
  type W1Variant,
} from './baselines/index.js';
import { W1_TRAJECTORIES, W1_WEBAPP_TRAJECTORIES, type W1Trajectory } from './host-path/faults.js';
import { runHostPath } from './host-path/sequence.js';
import { providerSurface } from './host-path/provider-surface.js';
import { webappSurface } from './host-path/webapp-surface.js';
import type { HostPathOutcome } from './host-path/run.js';
import { expectationsOf, summarise, tableOf, W1_VARIANTS } from './compare/table.js';
import { runW1Continuation, w1ContinuationText } from './continuation/run.js';
import type { AcpAgent } from '../shared/harnesses.js';

/** The source tree (lines of code are counted in the .ts a user keeps, not in dist/). */
const SOURCE = fileURLToPath(new URL('../../../workloads/world-w1/', import.meta.url));

/**
 * The code each variant needs beside the provider or the web app, per surface (the Host and the
 * generic adapters are the product's, not counted; a plain browser client drives the same adapter
 * with the same site config as the Host).
 */
const HTTP_CLIENT = ['baselines/baselines.ts', 'baselines/client-loop.ts'];
const BROWSER_CLIENT = ['baselines/browser-baselines.ts', 'baselines/client-loop.ts', 'webapp/browser-config.ts'];
const PERMANENT_CODE: Record<W1Surface, Partial<Record<W1Variant, string[]>>> = {
  http: {
    'a-retry': HTTP_CLIENT,
    'b-key': HTTP_CLIENT,
    'c-lookup': HTTP_CLIENT,
    'd-host': ['host-path/spec.ts', 'provider/adapter-config.ts'],
  },
  browser: {
    'a-retry': BROWSER_CLIENT,
    'c-lookup': BROWSER_CLIENT,
    'd-host': ['host-path/spec.ts', 'webapp/browser-config.ts'],
  },
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

/** True under CI (`CI=true`), where the browser rows must run: a missing Chromium fails the demo. */
const underCi = () => ['true', '1'].includes((process.env['CI'] ?? '').toLowerCase());

/**
 * The browser rows: per variant, a web app process of its own (its own file, which every count is
 * read from) and the comparison's browser adapters for it, closed before the next variant's.
 */
async function browserRows(
  state: string,
  trajectories: readonly W1Trajectory[],
  executablePath: string,
  say: (line: string) => void,
): Promise<W1ResultRow[]> {
  const rows: W1ResultRow[] = [];
  for (const variant of [...BROWSER_BASELINE_VARIANTS, 'd-host'] as const) {
    const dir = join(state, `webapp-${variant}`);
    mkdirSync(dir, { recursive: true });
    const webapp = await startWebapp({ db: join(dir, 'webapp.db'), identity: 'w1-webapp' });
    const adapters = webappAdapters({ url: webapp.url, executablePath });
    try {
      if (variant === 'd-host') {
        const surface = webappSurface(webapp, 'w1-webapp', adapters, executablePath);
        const outcomes = await runHostPath(join(state, 'host-webapp'), surface, trajectories, say);
        outcomes.forEach((outcome, i) => rows.push(hostRow(trajectories[i]!, outcome)));
        continue;
      }
      for (const trajectory of trajectories) {
        say(`  ${variant}: ${trajectory.name}`);
        rows.push(await runBrowserBaseline({ webapp, adapters }, variant, trajectory.fault));
      }
    } finally {
      await adapters.close();
      await webapp.stop();
    }
  }
  return rows;
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
 * `ordivon demo --workload world-w1`: every provider trajectory under each of the four variants,
 * each variant against a provider process of its own (its own records file, which every count is
 * read from); every browser trajectory under (a), (c) and (d), each against a web app process of
 * its own (skipped, and said so, without Chromium; a failure under CI); then replacement after
 * loss with real agents (continuation/). Prints the table and the continuation (`--json`: the
 * results), writes `world-w1-results.json` in the state root, and exits 0 only if every
 * expectation holds, else `demo_failed` naming each that did not (docs/world-w1.md).
 */
export async function worldW1Demo(options: WorldW1Options, io: Io): Promise<number> {
  if (options.fresh) rmSync(options.state, { recursive: true, force: true });
  mkdirSync(options.state, { recursive: true });
  const chosen = <T extends W1Trajectory>(list: readonly T[]) =>
    options.only ? list.filter((t) => options.only!.includes(t.name)) : list;
  const trajectories = chosen(W1_TRAJECTORIES);
  const browser = chosen(W1_WEBAPP_TRAJECTORIES);
  const withContinuation = options.only === undefined || options.only.includes('continuation');
  const say = (line: string) => io.err(line);
  say(
    `ordivon demo: world-w1 on ${options.state}; ${trajectories.length} provider trajectories × ${W1_VARIANTS.length} variants; ${browser.length} browser trajectories × ${BROWSER_BASELINE_VARIANTS.length + 1} variants${withContinuation ? '; replacement after loss' : ''}`,
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
  // The browser rows need Chromium, which npm does not install: without it they are skipped and
  // said so, except under CI, where skipping them would let the demo pass without them.
  const chromium = browser.length > 0 ? findChromium() : undefined;
  const browserSkipped = chromium && 'missing' in chromium ? `Chromium not found: ${chromium.missing}` : undefined;
  if (chromium && 'path' in chromium) rows.push(...(await browserRows(options.state, browser, chromium.path, say)));
  else if (browserSkipped) say(`  browser rows skipped: ${browserSkipped}`);
  const continuation = withContinuation ? await runW1Continuation(options.state, options.acpAgent, say) : undefined;
  const summary = summarise(rows, (variant, surface) => linesOf(PERMANENT_CODE[surface][variant] ?? []));
  const failed = [
    ...expectationsOf(rows, [...trajectories, ...browser]),
    ...(browserSkipped && underCi() ? [`browser rows: CI=true, and ${browserSkipped}`] : []),
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
    ...(chromium ? { browser: 'path' in chromium ? { chromium: chromium.path } : { skipped: browserSkipped } } : {}),
    ...(continuation ? { continuation } : {}),
    failed,
  };
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  const human = () =>
    [
      ...(rows.length > 0 ? tableOf(summary) : []),
      ...(browserSkipped ? [`browser rows skipped: ${browserSkipped}`] : []),
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
