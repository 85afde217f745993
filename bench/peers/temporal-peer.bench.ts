// Scenario: Temporal as a peer — what most users would pick instead replays a workflow's history
// on every cache miss. Offline, with no server: each generated Task's journal becomes a Temporal
// workflow history built event by event to Temporal's history schema (started; then per journal
// event a `WorkflowExecutionSignaled` carrying it and the workflow task that took it; completed
// when the statechart finishes), and `Worker.runReplayHistories` replays them through a workflow
// running the same Task statechart (bench/temporal/task-workflow.ts). Beside it: our verified
// boot (→ serving) of the same root, i.e. the same Tasks and events.
//
// What Temporal's replay checks is its own: the workflow's commands against the history
// (non-determinism). Ours also hashes the chain, reads and checks objects and compares
// projections. The workflow bundle is built once, untimed; the histories are built untimed.
//
// tinybench: one timed replay after an untimed warm-up replay of two histories (Temporal takes
// about a second per 100-event history here); 3 timed boots after a warm-up boot.
//
//   node dist/bench/peers/temporal-peer.bench.js [--quick]
import { pathToFileURL, fileURLToPath } from 'node:url';
import { DefaultLogger, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { defaultPayloadConverter } from '@temporalio/common';
// @temporalio/proto is CommonJS whose exports Node cannot name statically.
import proto from '@temporalio/proto';
import { createActor } from 'xstate';
import { taskMachine, type TaskEvent } from '../../machines/index.js';
import { machineEvents } from '../machine-events.js';
import { generateRoot } from '../generate.js';
import { TEMPORAL, TEMPORAL_OURS } from '../report/headline.js';
import { progress, timedBoot } from '../recovery.bench.js';
import type { BenchContext, BenchRow } from '../report/results-model.js';
import { historyRow, scenarioArgs, timeIt } from '../util.js';

const { temporal } = proto;
type History = ReturnType<typeof temporal.api.history.v1.History.fromObject>;

const WORKFLOW = fileURLToPath(new URL('../temporal/task-workflow.js', import.meta.url));
const QUEUE = { name: 'ordivon-bench' };
const SIGNAL = 'task.event';

type HistoryEvent = Record<string, unknown>;

/**
 * One Task's journal as a Temporal workflow history: started, a workflow task, then per event a
 * signal and the workflow task that took it, and — when the statechart reached a final state —
 * the completion the workflow's last workflow task commanded.
 */
export function taskHistory(workflowId: string, events: TaskEvent[]): History {
  const out: HistoryEvent[] = [];
  const t0 = Date.UTC(2026, 0, 1);
  const push = (eventType: string, attributes: Record<string, unknown>): number => {
    const eventId = out.length + 1;
    const at = t0 + eventId;
    out.push({
      eventId,
      eventTime: { seconds: Math.floor(at / 1000), nanos: (at % 1000) * 1e6 },
      eventType,
      ...attributes,
    });
    return eventId;
  };
  const workflowTask = (): number => {
    const scheduled = push('EVENT_TYPE_WORKFLOW_TASK_SCHEDULED', {
      workflowTaskScheduledEventAttributes: { taskQueue: QUEUE, startToCloseTimeout: { seconds: 10 }, attempt: 1 },
    });
    const started = push('EVENT_TYPE_WORKFLOW_TASK_STARTED', {
      workflowTaskStartedEventAttributes: {
        scheduledEventId: scheduled,
        identity: 'bench',
        requestId: `r${scheduled}`,
      },
    });
    return push('EVENT_TYPE_WORKFLOW_TASK_COMPLETED', {
      workflowTaskCompletedEventAttributes: { scheduledEventId: scheduled, startedEventId: started, identity: 'bench' },
    });
  };
  push('EVENT_TYPE_WORKFLOW_EXECUTION_STARTED', {
    workflowExecutionStartedEventAttributes: {
      workflowType: { name: 'taskWorkflow' },
      taskQueue: QUEUE,
      input: { payloads: [] },
      workflowTaskTimeout: { seconds: 10 },
      originalExecutionRunId: `run-${workflowId}`,
      firstExecutionRunId: `run-${workflowId}`,
      attempt: 1,
    },
  });
  let last = workflowTask();
  // The statechart decides when the workflow completes, as it will in the replay.
  const actor = createActor(taskMachine).start();
  for (const event of events) {
    push('EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED', {
      workflowExecutionSignaledEventAttributes: {
        signalName: SIGNAL,
        input: { payloads: [defaultPayloadConverter.toPayload(event)] },
        identity: 'bench',
      },
    });
    actor.send(event);
    last = workflowTask();
  }
  const final = actor.getSnapshot();
  if (final.status === 'done') {
    push('EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED', {
      workflowExecutionCompletedEventAttributes: {
        result: { payloads: [defaultPayloadConverter.toPayload(JSON.stringify(final.value))] },
        workflowTaskCompletedEventId: last,
      },
    });
  }
  return temporal.api.history.v1.History.fromObject({ events: out });
}

/** Replays `histories` with Temporal's replay worker; resolves with the ms taken. Throws on any replay failure. */
export async function temporalReplay(
  code: string,
  histories: { workflowId: string; history: History }[],
): Promise<number> {
  const started = performance.now();
  let failed = 0;
  let first: unknown;
  for await (const result of Worker.runReplayHistories({ workflowBundle: { code }, replayName: 'bench' }, histories)) {
    if (result.error) {
      failed++;
      first ??= result.error;
    }
  }
  const ms = performance.now() - started;
  if (failed > 0)
    throw new Error(`temporal: ${failed} of ${histories.length} histories failed to replay: ${String(first)}`);
  return ms;
}

export async function runTemporalPeerBench(ctx: BenchContext): Promise<BenchRow[]> {
  const size = { tasks: ctx.quick ? 10 : 100, events: 100 };
  const events = size.tasks * size.events;
  const { root } = await generateRoot({ ...size, onProgress: progress(ctx, 'lmdb', events) });
  // Temporal's own logs (bundling, worker state changes) would drown the bench's.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOW, logger: new DefaultLogger('WARN') });
  const streams = await machineEvents(root);
  const histories = streams.map((stream, i) => ({
    workflowId: `task-${i}`,
    history: taskHistory(`task-${i}`, stream),
  }));
  const historyEvents = histories.reduce((n, h) => n + h.history.events.length, 0);
  ctx.log(`temporal: ${histories.length} histories, ${historyEvents.toLocaleString()} history events`);
  // Temporal's replay takes about a second per 100-event history here, so one timed run each,
  // after an untimed warm-up (two histories; one boot).
  await temporalReplay(code, histories.slice(0, 2));
  const replay = await timeIt('temporal replay', () => temporalReplay(code, histories), { iterations: 1 });
  const ours = await timeIt('verified boot', () => timedBoot(root, 'full'), { iterations: 3, warmup: true });
  return [
    historyRow('temporal', TEMPORAL, size, replay, { historyEvents, workflowTasks: events + size.tasks }),
    historyRow('temporal', TEMPORAL_OURS, size, ours),
  ];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await runTemporalPeerBench({
    quick: scenarioArgs('peers/temporal-peer.bench').quick,
    log: (l) => console.error(l),
  });
  console.table(rows.map((r) => ({ name: r.name, tasks: r.tasks, events: r.events, medianMs: r.medianMs.toFixed(0) })));
}
