// The confinement scenario's second part: the README's worked example (examples/quickstart, the
// `command` driver running agent.mjs) through two real Hosts opened side by side, one with
// confinement `bwrap` and one with `none`. Each round creates a Task on each Host, their order
// alternating, and times stage `investigate` from its Assignment to its run observed
// (`run.observe` committed: the agent started, ran the frozen tests, wrote findings.json, exited,
// and its receipt and artifacts were recorded) and stage `fix` from its Assignment to the
// verification recorded (the agent's run and the Host's own run of the acceptance command, each
// a process the Runtime confines).
//
// The harness is the example's `my-agent` as `ordivon run` loads it (cli/config.ts: relative
// `readable` paths resolved against the file's folder), with the example's folder added to
// `readable` should the configuration not name it: confined, a process sees only its workspace,
// the system folders and what the configuration adds, and `sh -c 'exec node "$MY_AGENT"'` names
// the agent through a variable, not as an argument (cadad32's example named no `readable`, and
// its agent was not found inside the sandbox). The rows say whether it was added, and the
// harness's network.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HarnessRunReceipt } from '../drivers/index.js';
import type { HarnessConfig } from '../frontier/index.js';
import { openHost, type Host } from '../host/index.js';
import { parseTaskSpec, pinFrozenTests } from '../kernel/index.js';
import type { TaskSpec } from '../objects/index.js';
import { readSpecFile } from '../cli/spec-file.js';
import { loadConfig } from '../cli/config.js';
import { taskRuns } from '../views/index.js';
import { confinementStage, type StageName } from './report/confinement-headline.js';
import type { BenchContext, BenchRow } from './report/results-model.js';
import { timingOf } from './startup.bench.js';

/** Timed rounds (a Task on each Host per round): 11, or 2 with --quick. */
export const STAGE_ROUNDS = { full: 11, quick: 2 } as const;

/** The example's folder, from dist/bench in a clone (an installed package does not hold it). */
export const QUICKSTART = fileURLToPath(new URL('../../examples/quickstart/', import.meta.url));

type Mode = 'bwrap' | 'none';

/** What one stage took on one Host: to the moment the scenario times, and to the Task at rest. */
interface StageTime {
  ms: number;
  settledMs: number;
  /** The agent's process as its driver timed it, spawn → exit (the receipt's `timings.durationMs`). */
  runMs: number;
}

/** The example's harness as `ordivon run` loads it, the example's folder readable (see the file's header). */
async function quickstartHarness(): Promise<{ harness: HarnessConfig; readableAdded: boolean }> {
  const loaded = await loadConfig(join(QUICKSTART, 'ordivon.config.json'));
  const harness = loaded!.config.harnesses['my-agent']!;
  const folder = QUICKSTART.replace(/\/$/, '');
  const readable = harness.readable ?? [];
  const covered = readable.some((path) => !relative(path, folder).startsWith('..'));
  return covered
    ? { harness, readableAdded: false }
    : { harness: { ...harness, readable: [...readable, folder] }, readableAdded: true };
}

function quickstartSpec(): TaskSpec {
  return pinFrozenTests(parseTaskSpec(readSpecFile(join(QUICKSTART, 'task.json'))));
}

/**
 * Commits `stage`'s Assignment and resolves once the Task rests again, with the milliseconds from
 * the send to the commit of `until` and to the rest. Throws unless the stage did what the README
 * says it does (findings.json held; the Task completed with its verification passed), and unless
 * the run was confined exactly when the Host confines.
 */
async function timeStage(host: Host, mode: Mode, taskId: string, stage: StageName): Promise<StageTime> {
  const sup = host.supervisor;
  const until = stage === 'investigate' ? 'run.observe' : 'verification.record';
  const rest = stage === 'investigate' ? 'waiting' : 'completed';
  let at: number | undefined;
  const off = sup.subscribe((c) => {
    if (c.taskId === taskId && c.type === until && at === undefined) at = performance.now();
  });
  const started = performance.now();
  try {
    const sent = await sup.send(taskId, { type: 'assignment.commit', harness: 'my-agent', stage });
    if (!sent.written) throw new Error(`confinement: ${stage} refused: ${sent.code ?? ''} ${sent.detail ?? ''}`);
    await sup.waitFor(taskId, [rest], ['cancelled', 'blocked', ...(rest === 'completed' ? ['waiting'] : [])]);
  } finally {
    off();
  }
  const settledMs = performance.now() - started;
  const task = sup.getTask(taskId)!;
  const held = stage === 'investigate' ? 'findings.json' in task.context.evidence : task.context.verification?.passed;
  if (at === undefined || !held)
    throw new Error(`confinement: stage ${stage} of ${taskId} (confinement ${mode}) did not deliver: ${task.state}`);
  const run = taskRuns({ events: sup.events(taskId), object: (d) => sup.getObject(d).body }).at(-1);
  if (run?.confined !== (mode === 'bwrap'))
    throw new Error(`confinement: ${taskId}'s ${stage} run recorded confined ${String(run?.confined)} under ${mode}`);
  const receipt = HarnessRunReceipt.parse(sup.getObject(run.receiptDigest).body);
  return { ms: at - started, settledMs, runMs: receipt.timings.durationMs };
}

/** One Task through both stages on `host`. */
async function oneTask(host: Host, mode: Mode, spec: TaskSpec, taskId: string): Promise<Record<StageName, StageTime>> {
  await host.supervisor.createTask({ ...spec, taskId });
  const investigate = await timeStage(host, mode, taskId, 'investigate');
  return { investigate, fix: await timeStage(host, mode, taskId, 'fix') };
}

/** The stage rows: for each stage and mode, the median of `rounds` Tasks, and bwrap's ratio to none. */
export async function runQuickstartStages(ctx: BenchContext & { rounds: number }): Promise<BenchRow[]> {
  const spec = quickstartSpec();
  const agentBefore = process.env['MY_AGENT'];
  // The harness passes MY_AGENT by name (envFrom): the Host reads it from this process's environment.
  process.env['MY_AGENT'] = join(QUICKSTART, 'agent.mjs');
  const roots: string[] = [];
  const hosts = new Map<Mode, Host>();
  try {
    const { harness, readableAdded } = await quickstartHarness();
    for (const mode of ['bwrap', 'none'] as const) {
      const state = mkdtempSync(join(tmpdir(), `ordivon-bench-quickstart-${mode}-`));
      roots.push(state);
      hosts.set(
        mode,
        await openHost({
          state,
          purpose: `bench confinement pid ${process.pid}`,
          harnesses: { 'my-agent': harness },
          confinement: mode,
        }),
      );
    }
    const times = { bwrap: [] as Array<Record<StageName, StageTime>>, none: [] as Array<Record<StageName, StageTime>> };
    // One untimed Task each: the first agent start reads node and the example from disk.
    for (const mode of ['bwrap', 'none'] as const) await oneTask(hosts.get(mode)!, mode, spec, 'quickstart-warm');
    for (let round = 1; round <= ctx.rounds; round++) {
      const order: Mode[] = round % 2 === 1 ? ['none', 'bwrap'] : ['bwrap', 'none'];
      for (const mode of order) times[mode].push(await oneTask(hosts.get(mode)!, mode, spec, `quickstart-${round}`));
    }
    const rows: BenchRow[] = [];
    for (const stage of ['investigate', 'fix'] as const) {
      const none = timingOf(times.none.map((t) => t[stage].ms));
      for (const mode of ['none', 'bwrap'] as const) {
        const t = timingOf(times[mode].map((r) => r[stage].ms));
        rows.push({
          scenario: 'confinement',
          name: confinementStage(stage, mode),
          ...t,
          detail: {
            confinement: mode,
            until: stage === 'investigate' ? 'run.observe' : 'verification.record',
            settledMedianMs: timingOf(times[mode].map((r) => r[stage].settledMs)).medianMs,
            agentRunMedianMs: timingOf(times[mode].map((r) => r[stage].runMs)).medianMs,
            harnessNetwork: harness.network ?? 'host',
            readableAdded,
            ...(mode === 'bwrap'
              ? { vsNone: t.medianMs / none.medianMs, aboveNoneMs: t.medianMs - none.medianMs }
              : {}),
          },
        });
      }
    }
    ctx.log(
      `confinement: quickstart, ${ctx.rounds} Tasks each way: ${rows.map((r) => `${r.detail!.confinement} ${r.medianMs.toFixed(0)} ms`).join(', ')}`,
    );
    return rows;
  } finally {
    for (const host of hosts.values()) await host.stop();
    if (agentBefore === undefined) delete process.env['MY_AGENT'];
    else process.env['MY_AGENT'] = agentBefore;
    for (const root of roots) rmSync(root, { recursive: true, force: true });
  }
}
