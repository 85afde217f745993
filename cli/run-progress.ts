import { systemClock, type Clock, type Supervisor, type Committed } from '../kernel/index.js';
import type { EventRecord } from '../store/index.js';

type Event = { revision: number } & Pick<EventRecord, 'type' | 'data' | 'disposition'>;

const names = (map: unknown): string[] => Object.keys((map ?? {}) as Record<string, unknown>);

/** What one committed event says about the work, for a person: the stage's step, never the event name alone. */
export function describeEvent(event: Event): string {
  const data = event.data as Record<string, unknown>;
  if (!event.disposition.admitted) return `${event.type} refused: ${event.disposition.code}`;
  switch (event.type) {
    case 'task.created':
      return 'task created';
    case 'assignment.commit':
      return `assigned to ${String(data['harness'])}`;
    case 'context.compile':
      return `context compiled ${String(data['contextDigest']).slice(0, 19)}…`;
    case 'dispatch.intend':
      return `dispatching run ${String(data['clientRequestId'])}`;
    case 'dispatch.ack':
      return `run started (job ${String(data['jobId'])})`;
    case 'dispatch.lost':
      return 'no answer to the dispatch: looking the run up';
    case 'dispatch.reconcile':
      return `run found by its request id (${(data['jobIds'] as unknown[]).length} job(s))`;
    case 'run.observe': {
      const kept = names(data['evidence']);
      // `{code, detail}` since machine version 5; the detail alone before.
      const refused = Object.entries(
        (data['refused'] ?? {}) as Record<string, { code: string; detail: string } | string>,
      );
      return [
        `run ${String(data['jobStatus'])}`,
        kept.length > 0 ? `artifacts ${kept.join(', ')}` : 'no artifact retained',
        ...refused.map(
          ([name, why]) => `${name} refused: ${typeof why === 'string' ? why : `${why.code}: ${why.detail}`}`,
        ),
      ].join('; ');
    }
    case 'evaluation.settle': {
      const missing = (data['missing'] ?? []) as string[];
      return missing.length > 0 ? `settled without ${missing.join(', ')}` : 'settled';
    }
    case 'completion.propose':
      return `completion proposed with ${names(data['evidence']).join(', ') || 'no evidence'}`;
    case 'verification.record':
      return data['passed'] === true ? 'verification passed' : 'verification failed';
    case 'task.cancel':
      return `cancelled: ${String(data['reason'])}`;
    default:
      return event.type;
  }
}

/** How often `ordivon run` says a stage is still running when nothing was committed meanwhile. */
export const HEARTBEAT_MS = 10_000;

export interface FollowOptions {
  /**
   * A line every `everyMs` (default HEARTBEAT_MS) of `clock` (default the system's) while the
   * Task is not in one of the `rest` states: `  fix g2  still dispatched: 20 s since … → …`, so a
   * long stage is not silent up to its timeout. Absent: no such lines (`--quiet`).
   */
  heartbeat?: { rest: readonly string[]; clock?: Clock; everyMs?: number };
}

/**
 * Prints one line per commit of the Task: the stage and generation, what happened, the state it
 * led to (`  fix g2  run succeeded; artifacts report.json → evaluating`). Returns the unsubscribe.
 */
export function followTask(
  sup: Supervisor,
  taskId: string,
  print: (line: string) => void,
  options: FollowOptions = {},
): () => void {
  const stageOf = new Map<number, string>();
  for (const event of sup.events(taskId)) noteStage(stageOf, event);
  const whereAt = (generation: number | undefined) =>
    (generation ? `${stageOf.get(generation) ?? '?'} g${generation}` : 'task').padEnd(16);
  const beat = options.heartbeat;
  const clock = beat?.clock ?? systemClock;
  let cancel = () => {};
  let rearm = () => {};
  let since = clock.mono();
  let last = 'started';
  const unsubscribe = sup.subscribe(
    (c: Committed) => {
      if (c.taskId !== taskId) return;
      const event = sup.events(taskId).find((e) => e.revision === c.revision);
      if (!event) return;
      noteStage(stageOf, event);
      const generation = (event.data as { generation?: number }).generation ?? sup.getTask(taskId)?.context.generation;
      since = clock.mono();
      last = describeEvent(event);
      print(`  ${whereAt(generation)} ${last} → ${c.state}`);
      // The next "still running" line comes a whole interval after this one.
      rearm();
      // The lines are read from this Host's copy of the Task: another Host's commits have none here.
    },
    { remote: 'none' },
  );
  if (!beat) return unsubscribe;
  const every = beat.everyMs ?? HEARTBEAT_MS;
  const setTimer = clock.setTimer ?? systemClock.setTimer!;
  const arm = () => {
    cancel = setTimer(every, () => {
      const task = sup.getTask(taskId);
      if (task && !beat.rest.includes(task.state)) {
        const seconds = Math.round((clock.mono() - since) / 1000);
        print(`  ${whereAt(task.context.generation)} still ${task.state}: ${seconds} s since ${last}`);
      }
      arm();
    });
  };
  rearm = () => {
    cancel();
    arm();
  };
  arm();
  return () => {
    cancel();
    unsubscribe();
  };
}

function noteStage(stageOf: Map<number, string>, event: Event): void {
  const data = event.data as { generation?: number; stage?: string; purpose?: string };
  if (event.type === 'assignment.commit' && event.disposition.admitted && data.generation)
    stageOf.set(data.generation, data.stage ?? data.purpose ?? '?');
}
