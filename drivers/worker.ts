import type { ChildProcess } from 'node:child_process';
import { subscribe } from 'node:diagnostics_channel';
import { threadId, type MessagePort } from 'node:worker_threads';
import { DriverResult, DriverRunInput, type DriverKind } from './receipt.js';
import { resolveEnvFrom } from './env-from.js';
import { describeIssues, zodIssue } from '../base/index.js';
import { describeThrown, driverFailure, invalidInputFailure } from './failures.js';
import { killLeftovers, processStartTicks, waitUntilStopped } from '../os/index.js';
import { ParentMessage, TaskEnvelope, type WorkerMessage } from './worker-protocol.js';

/** One driver: runs a provider to the end and returns data; should never throw (a throw is a crash). */
export type DriverFn = (input: DriverRunInput, signal: AbortSignal) => Promise<DriverResult>;
/** Loads a driver on first use, so a worker only loads the protocol code it runs. */
export type DriverLoaders = Record<DriverKind, () => Promise<DriverFn>>;

/** The real drivers, each imported lazily by kind: a thread only loads the protocol code it runs. */
export const defaultDriverLoaders: DriverLoaders = {
  command: async () => (await import('./command/index.js')).runCommand,
  codex: async () => (await import('./codex/index.js')).runCodex,
  acp: async () => (await import('./acp/index.js')).runAcp,
  loop: async () => (await import('./loop/index.js')).runLoopDriver,
};

interface ChildRecord {
  pid: number;
  startTicks: number;
  exited: boolean;
}

interface RunState {
  port: MessagePort;
  open: boolean;
  children: Map<number, ChildRecord>;
}

/** The run this thread is executing (the pool gives each worker one run at a time). */
let current: RunState | undefined;

function post(state: RunState, message: WorkerMessage): void {
  if (state.open) state.port.postMessage(message);
}

let subscribed = false;

/**
 * Reports every child process spawned in this thread — by any driver or library — to the run's
 * parent, so that a worker that dies cannot leave an orphaned process group behind. Subscribed on
 * the first task so that merely importing this module has no effect.
 */
function watchChildren(): void {
  if (subscribed) return;
  subscribed = true;
  subscribe('child_process', (message) => {
    const state = current;
    if (state === undefined) return;
    const child = (message as { process: ChildProcess }).process;
    child.once('spawn', () => {
      if (child.pid === undefined) return;
      // Read at once: until this thread reaps the child, even an exited one's process-table entry has
      // its start time (processStartTicks), which lets a later kill tell this group from a process
      // that reused the pid.
      const record: ChildRecord = { pid: child.pid, startTicks: processStartTicks(child.pid), exited: false };
      state.children.set(child.pid, record);
      post(state, { type: 'child', pid: child.pid, startTicks: record.startTicks });
      child.once('exit', () => {
        record.exited = true;
        post(state, { type: 'child_exit', pid: record.pid });
      });
    });
  });
}

/**
 * Builds the piscina task handler: parses the envelope and the `DriverRunInput`, wires the run's
 * port to an AbortSignal, dispatches by `input.driver`, parses the driver's `DriverResult`, and
 * kills process groups the driver left running.
 *
 * Failure semantics: always resolves with a `DriverResult`. Invalid input → `invalid_input` (the
 * zod path in `path`); a driver module that cannot be loaded → `driver_unavailable`
 * (`driver_load_failed`); a driver that throws or returns something that is not a `DriverResult` →
 * `driver_crashed` (`driver_threw` / `driver_result_invalid`, retryable). Only the death of the
 * thread itself escapes, and the pool turns that into `driver_crashed`.
 */
export function createWorkerHandler(
  loaders: DriverLoaders = defaultDriverLoaders,
): (task: unknown) => Promise<DriverResult> {
  const load = cachedLoader(loaders);

  return async function runDriverTask(task: unknown): Promise<DriverResult> {
    const envelope = TaskEnvelope.safeParse(task);
    if (!envelope.success) {
      return driverFailure(
        'invalid_input',
        'worker_task_invalid',
        `invalid worker task: ${describeIssues(envelope.error)}`,
        {
          path: zodIssue('worker_task_invalid', envelope.error).path,
        },
      );
    }
    watchChildren();
    const { port } = envelope.data;
    const state: RunState = { port, open: true, children: new Map() };
    const controller = new AbortController();
    port.on('message', (raw: unknown) => {
      const message = ParentMessage.safeParse(raw);
      if (message.success) controller.abort(new Error(message.data.reason));
    });
    current = state;
    post(state, { type: 'started', threadId });
    try {
      return await runInput(envelope.data.input, load, controller.signal);
    } finally {
      await endRun(state);
    }
  };
}

/** Loads each driver kind once; a failed load is retried on the next run rather than cached. */
function cachedLoader(loaders: DriverLoaders): (kind: DriverKind) => Promise<DriverFn> {
  const cache = new Map<DriverKind, Promise<DriverFn>>();
  return (kind) => {
    let fn = cache.get(kind);
    if (fn === undefined) {
      fn = loaders[kind]();
      fn.catch(() => cache.delete(kind));
      cache.set(kind, fn);
    }
    return fn;
  };
}

/** Parses the run's input, resolves its `envFrom`, and runs its driver to a parsed `DriverResult`. */
async function runInput(
  raw: unknown,
  load: (kind: DriverKind) => Promise<DriverFn>,
  signal: AbortSignal,
): Promise<DriverResult> {
  const parsed = DriverRunInput.safeParse(raw);
  if (!parsed.success) return invalidInputFailure(parsed.error);
  // The one place envFrom values are read: this thread, right before the provider is spawned.
  const resolved = resolveEnvFrom(parsed.data, process.env);
  if (!resolved.ok) return resolved.failure;
  const input = resolved.input;
  let run: DriverFn;
  try {
    run = await load(input.driver);
  } catch (error) {
    return driverFailure(
      'driver_unavailable',
      'driver_load_failed',
      `driver '${input.driver}' cannot be loaded: ${describeThrown(error)}`,
    );
  }
  let output: unknown;
  try {
    output = await run(input, signal);
  } catch (error) {
    return driverFailure('driver_crashed', 'driver_threw', `driver '${input.driver}' threw: ${describeThrown(error)}`);
  }
  const result = DriverResult.safeParse(output);
  if (!result.success) {
    return driverFailure(
      'driver_crashed',
      'driver_result_invalid',
      `driver '${input.driver}' returned an invalid result: ${describeIssues(result.error)}`,
      { path: zodIssue('driver_result_invalid', result.error).path },
    );
  }
  return result.data;
}

/** Kills the process groups the run left running, tells the parent, and closes the run's port. */
async function endRun(state: RunState): Promise<void> {
  const killed = killLeftovers(state.children.values());
  if (killed.length > 0) {
    await waitUntilStopped(killed);
    post(state, { type: 'leftovers_killed', pids: killed });
  }
  if (current === state) current = undefined;
  state.open = false;
  state.port.close();
}

/** The piscina entry point (default export) running the real drivers. */
export default createWorkerHandler();
