import { assign, fromPromise, setup } from 'xstate';

/** Why a supervisor stopped in `failed`: the code of the first finding, and every finding. */
export interface SupervisorFailure {
  code: string;
  message: string;
  findings: Array<{ code: string; taskId?: string; revision?: number; object?: string; message: string }>;
}

/** What validation did (`Supervisor.bootReport()`; in the inspector as the context's `boot`). */
export interface BootSummary {
  mode: 'full' | 'checkpoint';
  /** Tasks that passed, events verified (chain and objects), distinct objects checked. */
  tasks: number;
  events: number;
  objects: number;
  /** Events of those replayed through the statechart (all of them in `full` mode). */
  replayed: number;
  /** The running Task machine's code hash, which checkpoints are bound to. */
  codeHash: string;
  /** Worker threads that verified (0: the supervisor's own thread). */
  workers: number;
  /** How long validation took, by the supervisor's clock (ms). */
  ms: number;
  /**
   * `checkpoint` mode: Tasks replayed from their checkpoint (of those, with events after it), or in
   * full — among them those whose checkpoint is from other machine code, or not in the chain.
   */
  checkpoint?: {
    trusted: number;
    tailReplayed: number;
    fullReplayed: number;
    codeChanged: number;
    headMismatch: number;
  };
}

/**
 * How far a recovery got (boot validation, `doctor`, backups); while `validating`, the latest
 * report is the context's `progress`. A full replay of a long history takes seconds to minutes.
 */
export interface RecoveryProgress {
  /** Tasks checked so far (whether they passed or not). */
  tasks: number;
  /** Tasks with a head: what there is to check. (On a damaged root, streams without a head are checked too, so `tasks` can pass it.) */
  totalTasks: number;
  /** Events verified so far. */
  events: number;
  /** Events to verify (the heads' revisions added up); absent when a caller's recovery does not know them beforehand. */
  totalEvents?: number;
}

export interface SupervisorContext {
  tasks: number;
  events: number;
  reconciled: number;
  failure: SupervisorFailure | null;
  boot: BootSummary | null;
  progress: RecoveryProgress | null;
}

const unprovided = (name: string) =>
  fromPromise<never, void>(async () => {
    throw new Error(`supervisor step ${name} was not provided`);
  });

function failureOf(error: unknown): SupervisorFailure {
  const e = error as { code?: unknown; message?: unknown; findings?: unknown };
  return {
    code: typeof e?.code === 'string' ? e.code : 'boot_failed',
    message: typeof e?.message === 'string' ? e.message : String(error),
    findings: Array.isArray(e?.findings) ? (e.findings as SupervisorFailure['findings']) : [],
  };
}

/**
 * The Supervisor's lifecycle (docs/design.md, "The Supervisor"): open the state root, validate every Task by rebuilding
 * it from its events, reconcile dispatches whose outcome is unknown, then serve until asked to
 * drain. Any failure before serving ends in `failed` with a typed reason; the Host never serves
 * on top of a stream gap, corrupt object, drifted projection or identity conflict.
 *
 * The steps are named actors provided by kernel/supervisor.ts; this file performs no I/O.
 */
export const supervisorMachine = setup({
  types: {} as {
    context: SupervisorContext;
    events: { type: 'stop' } | { type: 'progress'; progress: RecoveryProgress };
  },
  actors: {
    open: unprovided('open') as ReturnType<typeof fromPromise<void, void>>,
    validate: unprovided('validate') as ReturnType<typeof fromPromise<BootSummary, void>>,
    reconcile: unprovided('reconcile') as ReturnType<typeof fromPromise<{ reconciled: number }, void>>,
    drain: unprovided('drain') as ReturnType<typeof fromPromise<void, void>>,
  },
}).createMachine({
  id: 'supervisor',
  context: { tasks: 0, events: 0, reconciled: 0, failure: null, boot: null, progress: null },
  initial: 'booting',
  states: {
    booting: {
      invoke: {
        src: 'open',
        onDone: 'validating',
        onError: { target: 'failed', actions: assign({ failure: ({ event }) => failureOf(event.error) }) },
      },
      on: { stop: 'stopped' },
    },
    validating: {
      invoke: {
        src: 'validate',
        onDone: {
          target: 'reconciling',
          actions: assign({
            tasks: ({ event }) => event.output.tasks,
            events: ({ event }) => event.output.events,
            boot: ({ event }) => event.output,
          }),
        },
        onError: { target: 'failed', actions: assign({ failure: ({ event }) => failureOf(event.error) }) },
      },
      // Running counts from the validate step, so an inspector sees a long replay move.
      on: { progress: { actions: assign({ progress: ({ event }) => event.progress }) } },
    },
    reconciling: {
      invoke: {
        src: 'reconcile',
        onDone: { target: 'serving', actions: assign({ reconciled: ({ event }) => event.output.reconciled }) },
        onError: { target: 'failed', actions: assign({ failure: ({ event }) => failureOf(event.error) }) },
      },
    },
    serving: {
      on: { stop: 'draining' },
    },
    draining: {
      invoke: {
        src: 'drain',
        onDone: 'stopped',
        onError: { target: 'stopped', actions: assign({ failure: ({ event }) => failureOf(event.error) }) },
      },
    },
    stopped: { type: 'final' },
    failed: { type: 'final' },
  },
});
