import { setTimeout as delay } from 'node:timers/promises';
import { signalGroup } from '../../os/index.js';
import { collectArtifacts } from '../artifacts.js';
import { describeThrown, driverFailure, invalidInputFailure } from '../failures.js';
import { DriverRunInput, type DriverFailureKind, type DriverResult, type DriverRunInputIn } from '../receipt.js';
import { PermissionLog } from '../permission-route.js';
import { answerServerRequest, CodexAsks, isApproval } from './codex-approvals.js';
import { CodexConnection, type RpcOutcome, type WireDirection } from './codex-connection.js';
import { CodexProcess } from './codex-process.js';
import { CodexTally, type TurnEnd } from './codex-tally.js';
import { InitializeResult, ThreadStartResult, TurnStartResult } from './codex-wire.js';
import { CODEX_SERVER_OVERLOADED, type CodexFailureCode } from './errors.js';
import { turnFailureRetryable } from './turn-failure.js';
import { startRunLimits, type RunLimits } from '../run-deadline.js';

export type CodexApprovalPolicy = 'untrusted' | 'on-request' | 'never';
export type CodexSandboxMode = 'read-only' | 'workspace-write' | 'danger-full-access';

/** Codex-specific knobs that are not part of the pool-wide `DriverRunInput`. All optional. */
export interface CodexRunOptions {
  /** When Codex asks before acting (`thread/start.approvalPolicy`); default `on-request`. */
  approvalPolicy?: CodexApprovalPolicy;
  /**
   * Codex's sandbox for tool commands (`thread/start.sandbox`); default the input's `sandbox`, else
   * `danger-full-access` when the app-server itself runs confined (`confinedIn`: the Runtime's
   * sandbox encloses every command it starts, and Codex's own bubblewrap cannot nest inside it),
   * else `workspace-write`.
   */
  sandbox?: CodexSandboxMode;
  /** Malformed lines tolerated before the run ends with `protocol_error`; default 64. */
  maxMalformedLines?: number;
  /** Sees every wire line, both directions (tests, debugging). Not called across threads. */
  onWire?: (direction: WireDirection, line: string) => void;
  /** Told the app-server's pid (= its process group id) once it runs (tests, supervision). */
  onSpawn?: (pid: number) => void;
}

const CLIENT_INFO = { name: 'ordivon', title: 'Ordivon Host', version: '0.1.0' };

type Outcome =
  | { kind: 'turn'; end: TurnEnd }
  | { kind: 'stop'; reason: 'timeout' | 'heartbeat' | 'aborted' }
  | { kind: 'exited' }
  | { kind: 'protocol'; code: CodexFailureCode; detail: string; retryable: boolean };

function rpcFailure(method: string, outcome: Exclude<RpcOutcome, { ok: true }>): Outcome {
  if ('closed' in outcome) return { kind: 'exited' };
  const { code, message } = outcome.error;
  return {
    kind: 'protocol',
    code: 'codex_rpc_error',
    detail: `${method} failed: ${code} ${message}`,
    retryable: code === CODEX_SERVER_OVERLOADED,
  };
}

/**
 * Runs one Codex turn through the app-server protocol and returns its receipt as data (never
 * throws). `ok: true` means the protocol run finished — the turn reached `turn/completed` with
 * status `completed` or `interrupted` — not that the task is done; missing artifacts are still ok.
 * A `failed` turn is `provider_error` (retryable per `codexErrorInfo`) with the receipt attached.
 *
 * Stopping (timeout, abort): `turn/interrupt`, up to `graceMs` for `turn/completed`, then stdin is
 * closed, then SIGTERM and SIGKILL to the process group and every descendant (see
 * `CodexProcess.shutdown`); the result carries the partial receipt. If the driver itself throws,
 * the tree is still stopped before `driver_crashed` is returned.
 */
export async function runCodex(
  raw: DriverRunInputIn | DriverRunInput,
  signal: AbortSignal,
  options: CodexRunOptions = {},
): Promise<DriverResult> {
  const parsed = DriverRunInput.safeParse(raw);
  if (!parsed.success) return invalidInputFailure(parsed.error);
  const input = parsed.data;
  const permissions = new PermissionLog(input.cwd, input.policy);
  const tally = new CodexTally(input, permissions);
  const asks = new CodexAsks();
  if (signal.aborted) {
    return driverFailure('aborted', 'codex_aborted', 'the signal was aborted before the app-server started', {
      receipt: tally.receipt({ stopReason: 'aborted', artifacts: [], artifactRefusals: [] }),
    });
  }
  const started = await CodexProcess.start(input.command, input.args, {
    cwd: input.cwd,
    env: input.env,
    sandbox: input.confinedIn,
  });
  if (!started.ok) {
    return driverFailure('spawn_failed', 'codex_spawn_failed', started.detail, {
      receipt: tally.receipt({ stopReason: 'spawn_failed', artifacts: [], artifactRefusals: [] }),
    });
  }
  const proc = started.process;
  options.onSpawn?.(proc.pid);
  const live: LiveRun = {};
  const { conn, fatalOutcome } = connect(proc, tally, asks, permissions, options, live);
  const stopAt = new AbortController();
  const stopped = watchForStop(input, signal, stopAt.signal, live);
  // An exit counts once stdout is drained, so a final `turn/completed` is never lost to the race.
  const drained = () =>
    Promise.race([conn.ended, delay(input.graceMs, undefined, { signal: stopAt.signal }).catch(() => undefined)]);
  const exited = proc.exited.then(drained).then((): Outcome => ({ kind: 'exited' }));

  let outcome: Outcome | undefined;
  try {
    outcome = await Promise.race([session(conn, tally, input, options, live), stopped, exited, fatalOutcome]);
    if (outcome.kind === 'stop') await interrupt(conn, tally, proc, input.graceMs, live.turnStart);
  } catch (thrown) {
    outcome = { kind: 'protocol', code: 'codex_driver_crashed', detail: describeThrown(thrown), retryable: true };
  } finally {
    stopAt.abort();
  }
  try {
    return await conclude(input, tally, proc, outcome, () => conn.closeInput());
  } catch (thrown) {
    signalGroup(proc.leader, 'SIGKILL'); // last resort: the shutdown path itself failed
    return driverFailure('driver_crashed', 'codex_driver_crashed', describeThrown(thrown));
  }
}

/** What the steps of one run learn as it goes: its limits once started, its `turn/start` once sent. */
interface LiveRun {
  limits?: RunLimits;
  turnStart?: Promise<RpcOutcome>;
}

/**
 * Speaks to the app-server: notifications feed the tally and the asks, approvals are routed
 * through the run's policy, and too many unusable lines resolve `fatalOutcome`.
 */
function connect(
  proc: CodexProcess,
  tally: CodexTally,
  asks: CodexAsks,
  permissions: PermissionLog,
  options: CodexRunOptions,
  live: LiveRun,
): { conn: CodexConnection; fatalOutcome: Promise<Outcome> } {
  let fatal!: (outcome: Outcome) => void;
  const fatalOutcome = new Promise<Outcome>((resolve) => (fatal = resolve));
  const maxMalformed = options.maxMalformedLines ?? 64;
  const conn = new CodexConnection(proc.stdin, proc.stdout, {
    onNotification: (n) => {
      tally.observe(n);
      asks.observe(n);
    },
    onServerRequest: (request) =>
      answerServerRequest(request, isApproval(request.method) ? permissions.route(asks.ask(request)).answer : 'refuse'),
    onProtocolError: (detail) => {
      if (tally.protocolError() > maxMalformed) {
        fatal({
          kind: 'protocol',
          code: 'codex_malformed_flood',
          detail: `more than ${maxMalformed} unusable lines; last: ${detail}`,
          retryable: false,
        });
      }
    },
    // Every line from the app-server is progress for the heartbeat.
    onWire: (direction, line) => {
      if (direction === 'in') live.limits?.progress();
      options.onWire?.(direction, line);
    },
  });
  return { conn, fatalOutcome };
}

/** Starts the run's deadline and heartbeat; resolves when either, or the caller's abort, fires, until `done` aborts. */
function watchForStop(input: DriverRunInput, signal: AbortSignal, done: AbortSignal, live: LiveRun): Promise<Outcome> {
  return new Promise<Outcome>((resolve) => {
    live.limits = startRunLimits(input, (reason) => resolve({ kind: 'stop', reason }));
    const onAbort = () => resolve({ kind: 'stop', reason: 'aborted' });
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort(); // fired while the process was starting
    done.addEventListener('abort', () => {
      live.limits?.clear();
      signal.removeEventListener('abort', onAbort);
    });
  });
}

/** `initialize` → `thread/start` → `turn/start`, then waits for the turn to end. */
async function session(
  conn: CodexConnection,
  tally: CodexTally,
  input: DriverRunInput,
  options: CodexRunOptions,
  live: LiveRun,
): Promise<Outcome> {
  const init = await conn.request('initialize', { clientInfo: CLIENT_INFO, capabilities: null });
  if (!init.ok) return rpcFailure('initialize', init);
  tally.userAgent = InitializeResult.safeParse(init.result).data?.userAgent;
  conn.notify('initialized');
  const threadId = await startThread(conn, tally, input, options);
  if (typeof threadId !== 'string') return threadId;
  live.turnStart = conn
    .request('turn/start', {
      threadId,
      input: [{ type: 'text', text: input.prompt, text_elements: [] }],
    })
    .then((outcome) => {
      const id = outcome.ok ? TurnStartResult.safeParse(outcome.result).data?.turn.id : undefined;
      if (id !== undefined) tally.turnId ??= id;
      return outcome;
    });
  const turn = await live.turnStart;
  if (!turn.ok) return rpcFailure('turn/start', turn);
  if (tally.turnId === undefined)
    return {
      kind: 'protocol',
      code: 'codex_rpc_error',
      detail: 'turn/start result has no turn.id',
      retryable: false,
    };
  return { kind: 'turn', end: await tally.turnEnded };
}

/** Sends `thread/start` and records the thread in the tally; its id, or the outcome that ends the run. */
async function startThread(
  conn: CodexConnection,
  tally: CodexTally,
  input: DriverRunInput,
  options: CodexRunOptions,
): Promise<string | Outcome> {
  const thread = await conn.request('thread/start', {
    cwd: input.cwd,
    model: input.model ?? null,
    approvalPolicy: options.approvalPolicy ?? 'on-request',
    sandbox: options.sandbox ?? input.sandbox ?? (input.confinedIn ? 'danger-full-access' : 'workspace-write'),
  });
  if (!thread.ok) return rpcFailure('thread/start', thread);
  const threadResult = ThreadStartResult.safeParse(thread.result);
  if (!threadResult.success)
    return {
      kind: 'protocol',
      code: 'codex_rpc_error',
      detail: 'thread/start result has no thread.id',
      retryable: false,
    };
  const t = threadResult.data;
  tally.threadId = t.thread.id;
  tally.sessionId = t.thread.sessionId ?? undefined;
  tally.cliVersion = t.thread.cliVersion ?? undefined;
  tally.model = t.model ?? t.thread.model ?? undefined;
  tally.modelProvider = t.modelProvider ?? t.thread.modelProvider ?? undefined;
  return t.thread.id;
}

/** Stops the tree, reads the artifacts and turns the outcome into the run's result. */
async function conclude(
  input: DriverRunInput,
  tally: CodexTally,
  proc: CodexProcess,
  outcome: Outcome,
  closeInput: () => void,
): Promise<DriverResult> {
  const down = await proc.shutdown(input.graceMs, closeInput);
  const { artifacts, artifactRefusals } = collectArtifacts(input);
  const stopReason = outcome.kind === 'turn' ? outcome.end.status : stopReasonOf(outcome);
  const receipt = tally.receipt({
    stopReason,
    exitCode: down.exitCode,
    signal: down.signal,
    artifacts,
    artifactRefusals,
  });
  const leftovers = down.treeGone ? '' : ' (some processes of the tree outlived the final kill)';
  switch (outcome.kind) {
    case 'turn': {
      if (outcome.end.status !== 'failed') return { ok: true, receipt };
      const error = outcome.end.error;
      const info = error?.codexErrorInfo === undefined ? '' : ` [${JSON.stringify(error.codexErrorInfo)}]`;
      return driverFailure(
        'provider_error',
        'codex_turn_failed',
        `${error?.message ?? tally.lastError ?? 'no error given'}${info}`,
        { receipt, retryable: turnFailureRetryable(error?.codexErrorInfo) },
      );
    }
    case 'stop': {
      const acknowledged = tally.turnEnd === undefined ? 'turn not acknowledged' : `turn ${tally.turnEnd.status}`;
      const why =
        outcome.reason === 'timeout'
          ? `no turn/completed within ${input.timeoutMs} ms`
          : outcome.reason === 'heartbeat'
            ? `no line from the app-server for ${input.heartbeatMs} ms`
            : 'the AbortSignal fired';
      return driverFailure(
        outcome.reason === 'heartbeat' ? 'timeout' : outcome.reason,
        outcome.reason === 'heartbeat' ? 'heartbeat_timeout' : `codex_${outcome.reason}`,
        `${why}; ${acknowledged}; stopped with ${down.forced ?? 'end of input'}${leftovers}`,
        { receipt },
      );
    }
    case 'exited': {
      const how = down.signal === null ? `exit code ${String(down.exitCode)}` : `signal ${down.signal}`;
      const stderr = proc.stderrTail.split('\n').slice(-5).join(' | ');
      return driverFailure(
        'process_exited',
        'codex_process_exited',
        `app-server ended (${how}) before the turn completed: ${stderr}`,
        { receipt },
      );
    }
    case 'protocol': {
      const kind: DriverFailureKind = outcome.code === 'codex_driver_crashed' ? 'driver_crashed' : 'protocol_error';
      return driverFailure(kind, outcome.code, `${outcome.detail}${leftovers}`, {
        receipt,
        retryable: outcome.retryable,
      });
    }
  }
}

function stopReasonOf(outcome: Exclude<Outcome, { kind: 'turn' }>): string {
  if (outcome.kind === 'stop') return outcome.reason === 'heartbeat' ? 'heartbeat_timeout' : outcome.reason;
  if (outcome.kind === 'exited') return 'process_exited';
  return outcome.code === 'codex_driver_crashed' ? 'driver_crashed' : 'protocol_error';
}

/** The polite stop: `turn/interrupt`, then up to `graceMs` for `turn/completed` (or the process to end). */
async function interrupt(
  conn: CodexConnection,
  tally: CodexTally,
  proc: CodexProcess,
  graceMs: number,
  turnStart: Promise<RpcOutcome> | undefined,
): Promise<void> {
  if (tally.turnEnd !== undefined || proc.exit !== undefined || turnStart === undefined) return;
  const deadline = new AbortController();
  const grace = delay(graceMs, undefined, { signal: deadline.signal }).catch(() => undefined);
  // The turn id comes with the turn/start response; wait for it within the same grace.
  if (tally.turnId === undefined) await Promise.race([turnStart, proc.exited, grace]);
  if (tally.threadId !== undefined && tally.turnId !== undefined && tally.turnEnd === undefined) {
    void conn.request('turn/interrupt', { threadId: tally.threadId, turnId: tally.turnId });
    await Promise.race([tally.turnEnded, proc.exited, grace]);
  }
  deadline.abort();
}
