// Scenario: loop-cancel — how soon a cancel stops Loop v0's model call in flight (issue 46: "Cancel
// aborts an in-flight model call within 1 s of the event's commit").
//
// One Host (openHost, in this process, confinement `none`: no command runs, only the model call)
// with one Loop v0 harness on the scripted chat-completions model (workloads/scripted/chat-model.ts),
// which holds every answer (`hang: true`: the stream is opened and never completed). Each round
// creates a Task of the README's worked example, commits stage `investigate`'s Assignment, waits
// until the model has the loop's request, sends `task.cancel`, and times from the cancel's commit
// (the Supervisor's commit listener) to the model server's `close` of that request's connection
// (`streamsClosed()`): the commit → the frontier aborts the run → the driver pool's worker aborts
// the fetch → the socket closes. Then it waits for the run's job to end (the Runtime's record),
// checks it was cancelled for the cancel with the loop aborted, and times that too, before the
// next round. One untimed round first (the driver pool's worker starts), then 15 rounds (3 with
// --quick); median and max against the 1 s bound (report/loop-cancel-headline.ts).
//
//   node dist/bench/loop-cancel.bench.js [--quick]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { readSpecFile } from '../cli/spec-file.js';
import { clientRequestId, HarnessConfig } from '../frontier/index.js';
import { openHost, type Host } from '../host/index.js';
import { parseTaskSpec, pinFrozenTests } from '../kernel/index.js';
import type { TaskSpec } from '../objects/index.js';
import { startChatModel, type ChatModel } from '../workloads/scripted/chat-model.js';
import { percentile } from './confinement.bench.js';
import { LOOP_CANCEL, LOOP_CANCEL_BOUND_MS } from './report/loop-cancel-headline.js';
import type { BenchContext, BenchRow } from './report/results-model.js';
import { timingOf } from './startup.bench.js';
import { scenarioArgs } from './util.js';

/** Timed cancels: 15, or 3 with --quick. */
export const CANCEL_ROUNDS = { full: 15, quick: 3 } as const;

/** The README's worked example's Task (an installed package does not hold it: the suite skips the scenario). */
const SPEC = fileURLToPath(new URL('../../examples/quickstart/task.json', import.meta.url));

/** What one cancel took from its commit: to the model's connection closed, and to the run's job recorded ended. */
interface CancelTime {
  ms: number;
  jobEndedMs: number;
}

/**
 * One Task: its `investigate` run started, the model's request held, then cancelled. Throws
 * unless the model got exactly one more request, the Task is `cancelled` and its run's job was
 * cancelled for the cancel, its loop aborted.
 */
async function oneCancel(host: Host, model: ChatModel, spec: TaskSpec, taskId: string): Promise<CancelTime> {
  const sup = host.supervisor;
  const asked = model.requests.length;
  await sup.createTask({ ...spec, taskId });
  const sent = await sup.send(taskId, { type: 'assignment.commit', harness: 'loop', stage: 'investigate' });
  if (!sent.written)
    throw new Error(`loop-cancel: ${taskId}'s assignment refused: ${sent.code ?? ''} ${sent.detail ?? ''}`);
  // Recorded and its stream opened in one turn of the server's event loop: the call is held from here.
  await model.waitForRequests(asked + 1);
  let committed: number | undefined;
  const off = sup.subscribe((c) => {
    if (c.taskId === taskId && c.type === 'task.cancel' && committed === undefined) committed = performance.now();
  });
  let closed: number;
  try {
    const closing = model.streamsClosed().then(() => (closed = performance.now()));
    const cancel = await sup.send(taskId, { type: 'task.cancel', reason: 'bench: loop-cancel' });
    if (!cancel.written)
      throw new Error(`loop-cancel: ${taskId}'s cancel refused: ${cancel.code ?? ''} ${cancel.detail ?? ''}`);
    await closing;
  } finally {
    off();
  }
  if (committed === undefined) throw new Error(`loop-cancel: ${taskId}'s task.cancel was not seen committed`);
  const [job] = await host.runtime.findJobs({ clientRequestId: clientRequestId(taskId, 1, 1, 'run') });
  if (job === undefined) throw new Error(`loop-cancel: ${taskId}'s run has no job`);
  const ended = await host.runtime.observe(job.jobId);
  const jobEnded = performance.now();
  const code = ended.harness?.ok === false ? ended.harness.code : undefined;
  if (ended.state !== 'cancelled' || ended.stopReason !== 'cancel' || code !== 'loop_aborted')
    throw new Error(
      `loop-cancel: ${taskId}'s run ended ${ended.state} (${ended.stopReason ?? ''}, ${code ?? ''}), not cancelled with its loop aborted`,
    );
  if (sup.getTask(taskId)?.state !== 'cancelled') throw new Error(`loop-cancel: ${taskId} is not cancelled`);
  if (model.requests.length !== asked + 1)
    throw new Error(`loop-cancel: ${taskId} asked the model ${model.requests.length - asked} times, not once`);
  return { ms: closed! - committed, jobEndedMs: jobEnded - committed };
}

/** The scenario's row: the cancels' median, range and p95, each against the 1 s bound. */
export async function runLoopCancelBench(ctx: BenchContext & { rounds?: number }): Promise<BenchRow[]> {
  const rounds = ctx.rounds ?? (ctx.quick ? CANCEL_ROUNDS.quick : CANCEL_ROUNDS.full);
  const spec = pinFrozenTests(parseTaskSpec(readSpecFile(SPEC)));
  // Every request is held: the untimed round's and each timed one's.
  const held = { toolCalls: [], usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 }, hang: true };
  const model = await startChatModel({ script: { turns: Array.from({ length: rounds + 1 }, () => held) } });
  const state = mkdtempSync(join(tmpdir(), 'ordivon-bench-loop-cancel-'));
  let host: Host | undefined;
  try {
    host = await openHost({
      state,
      purpose: `bench loop-cancel pid ${process.pid}`,
      harnesses: {
        loop: HarnessConfig.parse({
          driver: 'loop',
          model: 'scripted-model',
          loop: { format: 'chat-completions', baseUrl: model.url },
          network: 'none',
        }),
      },
      confinement: 'none',
    });
    await oneCancel(host, model, spec, 'loop-cancel-warm');
    const times: CancelTime[] = [];
    for (let round = 1; round <= rounds; round++)
      times.push(await oneCancel(host, model, spec, `loop-cancel-${round}`));
    const t = timingOf(times.map((c) => c.ms));
    const samples = times.map((c) => c.ms);
    ctx.log(
      `loop-cancel: ${rounds} cancels, commit → connection closed median ${t.medianMs.toFixed(1)} ms, max ${t.maxMs.toFixed(1)} ms (bound ${LOOP_CANCEL_BOUND_MS} ms); commit → the run's job ended median ${timingOf(times.map((c) => c.jobEndedMs)).medianMs.toFixed(1)} ms`,
    );
    return [
      {
        scenario: 'loop-cancel',
        name: LOOP_CANCEL,
        ...t,
        detail: {
          format: 'chat-completions',
          p95Ms: percentile(samples, 95),
          boundMs: LOOP_CANCEL_BOUND_MS,
          medianVsBound: t.medianMs / LOOP_CANCEL_BOUND_MS,
          maxVsBound: t.maxMs / LOOP_CANCEL_BOUND_MS,
          jobEndedMedianMs: timingOf(times.map((c) => c.jobEndedMs)).medianMs,
        },
      },
    ];
  } finally {
    await host?.stop();
    await model.close();
    rmSync(state, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await runLoopCancelBench({
    quick: scenarioArgs('loop-cancel.bench').quick,
    log: (l) => console.error(l),
  });
  console.table(
    rows.map((r) => ({
      name: r.name,
      medianMs: r.medianMs.toFixed(1),
      maxMs: r.maxMs?.toFixed(1),
      runs: r.iterations,
    })),
  );
}
