import { CliError, EXIT, emit, emitReport, throttledProgress, type CliErrorCode, type Io } from '../cli-io.js';
import { booleanFlag, command, positional } from '../command.js';
import type { Finding } from '../../recovery/errors.js';
import type { verifyTails } from '../../recovery/index.js';
import type { ShowView } from '../service/show-view.js';
import type { ListRow } from '../service/cli-route.js';
import { queuedText } from './queued-text.js';
import { showText } from './show-text.js';
import { withReader } from './with-reader.js';

// The Host's modules are imported when a command runs, not with the command table (cli-io.ts).

/**
 * `ordivon doctor [--full]`: every boot check, read-only, and every object body against its
 * kind's schema (boot checks object digests only); exit 0 healthy, 1 with the findings. Every
 * event is verified either way (chain, objects, dispositions, heads, projections, identity);
 * without `--full` the statechart replays only the tails after the checkpoints the chain matches,
 * as the default boot does (`verifyTails`), with `--full` every event (`verifyFull`). The report
 * says which (`replay`, `replayed`, `checkpoint`). Worker threads when cores are idle.
 */
export const doctor = command({
  name: 'doctor',
  summary: 'every boot check over every event (replaying only tails after checkpoints); exit 1 naming what is wrong',
  details: [
    'Read-only (works beside a running supervisor): every event is verified (digest chain, every object re-hashed and its',
    "body checked against its kind's schema); the statechart replays the tails after the checkpoints the chain matches,",
    "or with --full every event. Exit 0 healthy, 1 with each finding's code, Task, revision and object.",
  ],
  flags: {
    full: booleanFlag('replay every event through the statechart, trusting no checkpoint (same checks, same codes)'),
  },
  async run(values, io) {
    // A long history takes a while: say how far it got (on stderr, every 2 s; nothing with --json).
    const onProgress = io.json ? undefined : throttledProgress((line) => io.err(line), 'doctor: checked ');
    const progress = onProgress ? { onProgress } : {};
    const [{ OBJECT_KINDS }, { verifyFull, verifyTails }] = await Promise.all([
      import('../../objects/index.js'),
      import('../../recovery/index.js'),
    ]);
    const report = await withReader(values.state, OBJECT_KINDS, async (store) => ({
      ...(values.full ? await verifyFull(store, progress) : await verifyTails(store, progress)),
      warnings: store.warnings(),
      root: store.root,
    })).catch((error: unknown) => damagedStore(values.state, error));
    const replay: 'full' | 'tails' = values.full ? 'full' : 'tails';
    const replayed = report.replayed ?? report.events;
    const healthy = report.findings.length === 0;
    const first = report.findings[0];
    return emitReport(
      io,
      {
        healthy,
        root: report.root,
        tasks: report.tasks.length,
        events: report.events,
        objects: report.objects,
        replay,
        replayed,
        ...(report.starts ? { checkpoint: report.starts } : {}),
        workers: report.workers,
        findings: report.findings,
        warnings: report.warnings,
      },
      () =>
        [
          healthy
            ? `healthy: ${report.tasks.length} tasks, ${report.events} events, ${report.objects} objects checked in ${report.root}`
            : `UNHEALTHY: ${report.findings.length} finding(s) in ${report.root}`,
          replayLine(replay, replayed, report.starts),
          ...report.findings.map(
            (f) =>
              `  ${f.code}  task=${f.taskId ?? '-'} revision=${f.revision ?? '-'} object=${f.object ?? '-'}  ${f.message}`,
          ),
          ...report.warnings.map((w) => `  warning: task ${w.taskId} passed ${w.threshold} events`),
        ].join('\n'),
      // Unhealthy is an error named by its first finding's code, as a boot that fails on it is.
      first && {
        code: first.code as CliErrorCode,
        message: `${report.findings.length} finding(s) in ${report.root}, the first: ${first.message}`,
      },
    );
  },
});

type DoctorReport = Omit<Awaited<ReturnType<typeof verifyTails>>, 'findings'> & {
  findings: Array<Finding<string>>;
  warnings: Array<{ taskId: string; threshold: number }>;
  root: string;
};

/**
 * A store whose data file has a damaged page (the open refused it `storage_corrupt` before LMDB
 * mapped it) as doctor's report: that one finding, as boot reports it; any other error as it is.
 */
async function damagedStore(state: string | undefined, error: unknown): Promise<DoctorReport> {
  const { resolveStateRoot, storageFinding } = await import('../../store/index.js');
  const finding = storageFinding((error as Error).cause);
  if (!finding) throw error;
  const none = { tasks: [], events: 0, objects: 0, replayed: 0, workers: 0, warnings: [] };
  return { ...none, findings: [finding], root: resolveStateRoot(state) };
}

/** Which replay `doctor` ran, in words. */
function replayLine(
  replay: 'full' | 'tails',
  replayed: number,
  starts: { trusted: number; fullReplayed: number; codeChanged: number; headMismatch: number } | undefined,
): string {
  if (replay === 'full' || !starts) return `replay: full, ${replayed} events replayed through the statechart`;
  const why = [
    starts.codeChanged > 0 ? `${starts.codeChanged} with checkpoints from other machine code` : '',
    starts.headMismatch > 0 ? `${starts.headMismatch} with checkpoints not in the chain` : '',
  ].filter(Boolean);
  return `replay: tails, ${replayed} events replayed through the statechart: ${starts.trusted} tasks from their checkpoint, ${starts.fullReplayed} in full${why.length > 0 ? ` (${why.join(', ')})` : ''}`;
}

/** `ordivon show TASK_ID [--events]`: the stored projection (and events) of one Task. */
export const show = command({
  name: 'show',
  summary: "a Task's state, evidence, Contexts with their items, rejections with their causes, runs (and its events)",
  details: ['While a service holds the state root, its live view is shown (the same fields).'],
  positionals: { taskId: positional('TASK_ID', 'the Task to show') },
  flags: { events: booleanFlag('also every event of its history, with its disposition') },
  async run(values, io) {
    const taskId = values.taskId;
    const [{ serviceFor }, { parseShowView, showViaService }] = await Promise.all([
      import('../service/cli-route.js'),
      import('../service/show-view.js'),
    ]);
    // While a service holds the state root, its live view is shown (the same fields).
    const service = serviceFor(values.state);
    if (service)
      return printShow(io, await withWorkspace(values.state, await showViaService(service, taskId, values.events)));
    const [{ OBJECT_KINDS, TaskSpec }, { taskShowView }, { taskFrontier }] = await Promise.all([
      import('../../objects/index.js'),
      import('../../views/index.js'),
      import('../../machines/index.js'),
    ]);
    return withReader(values.state, OBJECT_KINDS, async (store) => {
      const projection = store.projection(taskId);
      if (!projection) throw new CliError('task_not_found', `no task ${taskId}`);
      const snapshot = projection.snapshot as {
        value: never;
        context: { specDigest: string; lastRejection?: unknown; requests?: unknown } & Record<string, unknown>;
      };
      const spec = TaskSpec.parse(store.getObject(snapshot.context.specDigest, 'task-spec').body);
      const view = taskShowView({
        taskId,
        revision: projection.revision,
        state: projection.state,
        frontier: taskFrontier(snapshot.value),
        title: spec.title,
        context: snapshot.context,
        events: [...store.stream(taskId)].map(({ revision, event }) => ({ revision, ...event })),
        object: (digest) => store.getObject(digest).body,
        receipt: (digest) => store.getObject(digest, 'receipt').body,
        withEvents: values.events,
        child: (id) => {
          const child = store.projection(id);
          const generation = (child?.snapshot as { context?: { generation?: number } } | undefined)?.context
            ?.generation;
          return child ? { state: child.state, generation: generation ?? 0 } : undefined;
        },
      });
      return printShow(io, await withWorkspace(values.state, parseShowView(view, 'store')));
    });
  },
});

/** The view with the path of its Attempt's workspace (where the Host keeps it under the state root). */
async function withWorkspace(state: string | undefined, view: ShowView): Promise<ShowView> {
  const attempt = (view.context as { attempt?: unknown }).attempt;
  if (typeof attempt !== 'number' || attempt < 1) return view;
  const [{ attemptWorkspace }, { resolveStateRoot }] = await Promise.all([
    import('./work-back.js'),
    import('../../store/index.js'),
  ]);
  return { ...view, workspace: await attemptWorkspace(resolveStateRoot(state), view.taskId, attempt) };
}

/** Prints a Task view (from the store or from a running service) as `show` does. */
function printShow(io: Io, view: ShowView): number {
  emit(io, view, () => showText(view));
  return EXIT.ok;
}

/** `ordivon list`: every Task with its state and revision. */
export const list = command({
  name: 'list',
  summary: 'every Task with its state, revision and generation',
  async run(values, io) {
    const { listViaService, serviceFor } = await import('../service/cli-route.js');
    const service = serviceFor(values.state);
    if (service) {
      const rows = await listViaService(service);
      emit(io, rows, () => listText(rows));
      return EXIT.ok;
    }
    // A list reads projections only: no object kind is needed.
    return withReader(values.state, {}, (store) => {
      const rows = store.taskIds().map((taskId) => {
        const p = store.projection(taskId);
        const context = (p?.snapshot as { context?: { generation?: number } } | undefined)?.context;
        return {
          taskId,
          state: p?.state ?? 'unknown',
          revision: p?.revision ?? 0,
          generation: context?.generation ?? 0,
          // No `queued`: no Host dispatches while nothing serves the root; only a serving Host's line queues.
        };
      });
      emit(io, rows, () => listText(rows));
      return EXIT.ok;
    });
  },
});

/**
 * `list`'s table: a header row, then one aligned row per Task (`no tasks` when there is none); a
 * Task waiting for a run slot reads `assigned.ready (queued #2, waiting on concurrency.runs (2))`.
 */
function listText(rows: readonly ListRow[]): string {
  if (rows.length === 0) return 'no tasks';
  const table = [
    ['TASK', 'STATE', 'REVISION', 'GENERATION'],
    ...rows.map((r) => [
      r.taskId,
      r.queued ? `${r.state} (${queuedText(r.queued)})` : r.state,
      String(r.revision),
      String(r.generation),
    ]),
  ];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  return table
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  '))
    .join('\n');
}
