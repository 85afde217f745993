import * as acp from '@agentclientprotocol/sdk';
import { describeThrown, driverFailure, invalidInputFailure } from '../failures.js';
import { DriverRunInput, type DriverFailureKind, type DriverResult, type HarnessRunReceipt } from '../receipt.js';
import { AgentProcess, type ShutdownReport } from './agent-process.js';
import { buildReceipt } from './acp-receipt.js';
import { AcpRunError, type AcpFailureCode } from './errors.js';
import { PermissionLog } from '../permission-route.js';
import { acpPermissionAsk, pickPermission } from './permission.js';
import { WireLedger, type WireObserver } from './wire-ledger.js';
import { within } from './within.js';
import { startRunLimits } from '../run-deadline.js';
import type { RunLimitCode } from '../errors.js';
import { readWorkspaceText, writeWorkspaceText, type FsRefusal } from './workspace-fs.js';

/** In-process extras that do not cross the pool boundary (the pool calls `runAcp(input, signal)`). */
export interface AcpRunOptions {
  /** Sees every raw line in both directions, e.g. for a wire log or a test's evidence. */
  onWire?: WireObserver;
}

const CLIENT_INFO = { name: 'ordivon-host', version: '0.1.0' };

type Settled = { tag: 'answered' } | { tag: 'failed'; error: unknown; stage: string };
type StopCause = 'timeout' | 'heartbeat' | 'aborted';
type First = Settled | { tag: 'stopped'; reason: StopCause } | { tag: 'exited' };

/**
 * Runs one ACP turn: `initialize` → `session/new` → `session/prompt`, serving confined
 * `fs/read_text_file` / `fs/write_text_file` (unless `input.clientFs` is false) and answering
 * permissions through `input.policy` (docs/permissions.md; each answer is kept in the receipt)
 * (no terminal capability is advertised). The receipt is built from the raw ndjson stream.
 * `ok: true` means the protocol run finished (any stop reason), not that the task is done;
 * missing artifacts are still `ok: true`. The agent gets exactly `input.env`, nothing inherited.
 *
 * Failure semantics: never throws. On timeout or abort it sends `session/cancel`, waits up to
 * `graceMs` for the prompt to resolve, then kills the whole process group: `timeout` / `aborted`
 * with what was observed (stop reason `cancelled` if the agent answered, else `timeout` /
 * `aborted`). An agent that exits before answering gives `process_exited`; a JSON-RPC error
 * from it gives `provider_error`; a wrong protocol version or a connection closed by a live
 * agent gives `protocol_error`. After every answer the agent's stdin is closed, it gets
 * `graceMs` to exit, then SIGTERM, then SIGKILL; when the promise resolves the group is gone
 * (or `detail` says it was not). Retryability is the project default per kind.
 */
export async function runAcp(
  input: DriverRunInput,
  signal: AbortSignal,
  options: AcpRunOptions = {},
): Promise<DriverResult> {
  const startedAt = new Date();
  const parsed = DriverRunInput.safeParse(input);
  if (!parsed.success) return invalidInputFailure(parsed.error);
  const run = parsed.data;
  if (run.driver !== 'acp')
    return driverFailure(
      'invalid_input',
      'invalid_input',
      `invalid driver run input: driver: expected 'acp', got '${run.driver}'`,
      { path: 'driver' },
    );
  if (signal.aborted) return driverFailure('aborted', 'acp_aborted', 'aborted before the agent was started');
  try {
    return await drive(run, signal, options, startedAt);
  } catch (error) {
    return driverFailure('driver_crashed', 'acp_driver_crashed', describeThrown(error));
  }
}

async function drive(
  run: DriverRunInput,
  signal: AbortSignal,
  options: AcpRunOptions,
  startedAt: Date,
): Promise<DriverResult> {
  // Every line from the agent is progress for the heartbeat; the limits start in converse().
  const heartbeat = { progress: (): void => undefined };
  const ledger = new WireLedger((direction, message, line) => {
    if (direction === 'agent_to_client') heartbeat.progress();
    options.onWire?.(direction, message, line);
  });
  const started = await AgentProcess.start(
    run.command,
    run.args,
    { cwd: run.cwd, env: run.env, sandbox: run.confinedIn },
    ledger,
  );
  if (!started.ok) return driverFailure('spawn_failed', 'acp_spawn_failed', started.detail);
  try {
    return await converse(run, signal, started.process, ledger, startedAt, heartbeat);
  } finally {
    // Only does something when converse() threw: every normal path has already ended the group.
    started.process.killGroup();
  }
}

async function converse(
  run: DriverRunInput,
  signal: AbortSignal,
  agentProcess: AgentProcess,
  ledger: WireLedger,
  startedAt: Date,
  heartbeat: { progress: () => void },
): Promise<DriverResult> {
  const fsRefusals: FsRefusal[] = [];
  const watch = watchForStop(run, signal, heartbeat);
  const permissions = new PermissionLog(run.cwd, run.policy);
  const turn = { cancelling: false };
  const clientFs = run.clientFs !== false;
  const { client, served } = agentClient(run, ledger, fsRefusals, permissions, turn, clientFs);
  const connection = client.connect(acp.ndJsonStream(agentProcess.toAgent, agentProcess.fromAgent));
  const conversation = promptOnce(connection.agent, run, clientFs);

  // An exit is only final once the agent's last lines (maybe the prompt answer) had `graceMs` to arrive.
  const exitedThenGrace = agentProcess.exited.then(async (): Promise<First> => {
    await within(conversation, run.graceMs);
    return { tag: 'exited' };
  });
  const first: First = await Promise.race([conversation, watch.stopped, exitedThenGrace]);
  watch.clear();

  let outcome: Outcome;
  if (first.tag === 'stopped') {
    turn.cancelling = true;
    outcome = await cancelStoppedTurn(run, first.reason, ledger, connection, conversation, agentProcess);
  } else outcome = await concludeEndedTurn(run, first, ledger, agentProcess);
  // Late lines (updates after the answer) are still counted once the agent's stdout has ended.
  await within(agentProcess.outputEnded, run.graceMs);
  await within(Promise.allSettled([...served]), run.graceMs);
  connection.close();
  const receipt: HarnessRunReceipt = buildReceipt({
    run,
    ledger,
    fsRefusals,
    permissions,
    stopReason: outcome.stopReason,
    exit: outcome.shutdown,
    startedAt,
    endedAt: new Date(),
  });
  // Retryability is the project-wide default per kind (drivers/errors.ts), not decided here.
  const { failure } = outcome;
  if (failure) return driverFailure(failure.kind, failure.code, failure.detail, { receipt });
  return { ok: true, receipt };
}

/** How a turn ended, before the receipt is built. */
interface Outcome {
  stopReason: string;
  failure?: { kind: DriverFailureKind; code: AcpFailureCode | RunLimitCode; detail: string };
  shutdown: ShutdownReport;
}

/** Starts the run's deadline and heartbeat and resolves `stopped` when either, or the caller's abort, fires. */
function watchForStop(
  run: DriverRunInput,
  signal: AbortSignal,
  heartbeat: { progress: () => void },
): { stopped: Promise<First>; clear: () => void } {
  const stop = new AbortController();
  const limits = startRunLimits(run, (limit) => stop.abort(limit));
  heartbeat.progress = limits.progress;
  const onAbort = () => stop.abort('aborted');
  signal.addEventListener('abort', onAbort, { once: true });
  const stopped = new Promise<First>((resolve) =>
    stop.signal.addEventListener('abort', () => resolve({ tag: 'stopped', reason: stop.signal.reason as StopCause }), {
      once: true,
    }),
  );
  return {
    stopped,
    clear: () => {
      limits.clear();
      signal.removeEventListener('abort', onAbort);
    },
  };
}

/**
 * The client side the agent talks to: permissions answered through the run's policy, and, with
 * `clientFs`, confined file reads and writes, each kept in `served` until it settles.
 */
function agentClient(
  run: DriverRunInput,
  ledger: WireLedger,
  fsRefusals: FsRefusal[],
  permissions: PermissionLog,
  turn: { cancelling: boolean },
  clientFs: boolean,
): { client: acp.ClientApp; served: Set<Promise<unknown>> } {
  const sameSession = (sessionId: string, method: 'fs/read_text_file' | 'fs/write_text_file', path: string) => {
    if (ledger.sessionId === undefined || sessionId === ledger.sessionId) return;
    fsRefusals.push({ method, path, code: 'wrong_session' });
    throw new acp.RequestError(-32002, `wrong_session: ${sessionId} is not this run's session`, {
      code: 'wrong_session',
      sessionId,
    });
  };
  // fs requests the agent made are served before the run ends: a write the agent did not wait for
  // (it answered the prompt at once) must still be on disk, or refused, when the receipt is built.
  const served = new Set<Promise<unknown>>();
  const serve = <T>(work: Promise<T>): Promise<T> => {
    served.add(work);
    void work.then(
      () => served.delete(work),
      () => served.delete(work),
    );
    return work;
  };
  const client = acp
    .client({ name: 'ordivon-acp' })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => ({
      outcome: pickPermission(
        params.options,
        permissions.route(acpPermissionAsk(params.toolCall)).answer,
        turn.cancelling,
      ),
    }));
  // Without the capability the methods are not served either (the SDK answers "method not found").
  if (clientFs)
    client
      .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
        sameSession(params.sessionId, 'fs/read_text_file', params.path);
        return serve(readWorkspaceText(run.cwd, params, fsRefusals).then((content) => ({ content })));
      })
      .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
        sameSession(params.sessionId, 'fs/write_text_file', params.path);
        return serve(writeWorkspaceText(run.cwd, params, fsRefusals, run.confinedIn?.user).then(() => ({})));
      });
  return { client, served };
}

/** `initialize` → `session/new` → `session/prompt`; a failure carries the stage it happened in. */
async function promptOnce(
  agent: acp.ClientConnection['agent'],
  run: DriverRunInput,
  clientFs: boolean,
): Promise<Settled> {
  let stage = 'initialize';
  try {
    const hello: acp.InitializeRequest = {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: clientFs, writeTextFile: clientFs }, terminal: false },
      clientInfo: CLIENT_INFO,
    };
    const init = await agent.request(acp.methods.agent.initialize, hello);
    if (init.protocolVersion !== acp.PROTOCOL_VERSION) {
      throw new AcpRunError(
        'acp_protocol_version',
        `agent answered protocolVersion ${init.protocolVersion}; this driver speaks ${acp.PROTOCOL_VERSION}`,
      );
    }
    stage = 'session/new';
    const session = await agent.request(acp.methods.agent.session.new, { cwd: run.cwd, mcpServers: [] });
    stage = 'session/prompt';
    await agent.request(acp.methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: 'text', text: run.prompt }],
    });
    return { tag: 'answered' };
  } catch (error) {
    return { tag: 'failed', error, stage };
  }
}

/** Sends `session/cancel` if a turn is in flight, gives it `graceMs`, then ends the agent. */
async function cancelStoppedTurn(
  run: DriverRunInput,
  reason: StopCause,
  ledger: WireLedger,
  connection: acp.ClientConnection,
  conversation: Promise<Settled>,
  agentProcess: AgentProcess,
): Promise<Outcome> {
  const sessionId = ledger.sessionId;
  const inTurn = sessionId !== undefined && ledger.promptSent && !ledger.promptAnswered;
  if (inTurn) {
    await connection.agent.notify(acp.methods.agent.session.cancel, { sessionId }).catch(() => {});
    await within(Promise.race([conversation, agentProcess.exited]), run.graceMs);
  }
  const polite = ledger.promptAnswered;
  const shutdown = await agentProcess.shutdown(run.graceMs, polite);
  const stopReason = ledger.stopReason ?? (reason === 'heartbeat' ? 'heartbeat_timeout' : reason);
  const what =
    reason === 'timeout'
      ? `no answer within ${run.timeoutMs} ms`
      : reason === 'heartbeat'
        ? `no message from the agent for ${run.heartbeatMs} ms`
        : 'the run was aborted';
  const cancel = !inTurn
    ? 'no turn was in flight, so no session/cancel was sent'
    : polite
      ? `session/cancel sent; the agent answered '${ledger.stopReason}'`
      : `session/cancel sent; no answer within ${run.graceMs} ms`;
  const detail = `${what}; ${cancel}; ${describe(shutdown)}`;
  const failure: Outcome['failure'] =
    reason === 'heartbeat'
      ? { kind: 'timeout', code: 'heartbeat_timeout', detail }
      : { kind: reason, code: `acp_${reason}`, detail };
  return { stopReason, failure, shutdown };
}

/** Ends the agent after a turn that settled or whose agent exited, and names any failure. */
async function concludeEndedTurn(
  run: DriverRunInput,
  first: Exclude<First, { tag: 'stopped' }>,
  ledger: WireLedger,
  agentProcess: AgentProcess,
): Promise<Outcome> {
  if (first.tag === 'answered' || ledger.promptAnswered) {
    // Answered (the ledger also covers an answer the SDK rejected but the raw stream carried).
    const shutdown = await agentProcess.shutdown(run.graceMs, true);
    return { stopReason: ledger.stopReason ?? 'end_turn', shutdown };
  }
  if (first.tag === 'failed' && first.error instanceof acp.RequestError) {
    const shutdown = await agentProcess.shutdown(run.graceMs, true);
    const e = first.error;
    const detail = `${first.stage} failed with ${e.code} ${e.message}${e.data === undefined ? '' : ' ' + JSON.stringify(e.data)}`;
    return {
      stopReason: 'provider_error',
      failure: { kind: 'provider_error', code: 'acp_agent_error', detail },
      shutdown,
    };
  }
  if (first.tag === 'failed' && first.error instanceof AcpRunError) {
    const shutdown = await agentProcess.shutdown(run.graceMs, true);
    const failure = { kind: 'protocol_error' as const, code: first.error.code, detail: first.error.message };
    return { stopReason: 'protocol_error', failure, shutdown };
  }
  return concludeUnanswered(run, first, ledger, agentProcess);
}

/**
 * The connection ended without an answer: the agent exited, or closed its stdout. The exit event
 * may trail the end of stdout, so an agent that ends without our signals counts as exited.
 */
async function concludeUnanswered(
  run: DriverRunInput,
  first: Exclude<First, { tag: 'stopped' }>,
  ledger: WireLedger,
  agentProcess: AgentProcess,
): Promise<Outcome> {
  await within(agentProcess.exited, run.graceMs);
  const shutdown = await agentProcess.shutdown(run.graceMs, true);
  const exitedEarly = shutdown.forced === null && agentProcess.exit !== undefined;
  const during = first.tag === 'failed' ? first.stage : ledger.promptSent ? 'session/prompt' : 'the handshake';
  if (exitedEarly) {
    const stderr = agentProcess.stderrTail ? `; stderr: ${agentProcess.stderrTail.slice(-500)}` : '';
    const failure = {
      kind: 'process_exited' as const,
      code: 'acp_process_exited' as const,
      detail: `the agent exited (code ${shutdown.exitCode}, signal ${shutdown.signal}) during ${during}${stderr}`,
    };
    return { stopReason: 'process_exited', failure, shutdown };
  }
  const cause = first.tag === 'failed' ? String((first.error as Error)?.message ?? first.error) : 'connection closed';
  const failure = {
    kind: 'protocol_error' as const,
    code: 'acp_connection_closed' as const,
    detail: `${cause} during ${during}; ${describe(shutdown)}`,
  };
  return { stopReason: 'protocol_error', failure, shutdown };
}

function describe(shutdown: ShutdownReport): string {
  const how = shutdown.forced ? `process group ended by ${shutdown.forced}` : 'the agent exited on its own';
  return shutdown.groupGone ? how : `${how}; some processes of the group were still alive`;
}
