import { performance } from 'node:perf_hooks';
import { collectArtifacts } from '../artifacts.js';
import { describeThrown, driverFailure } from '../failures.js';
import type { DriverFailureKind, DriverResult, DriverRunInput, HarnessRunReceipt } from '../receipt.js';
import { startRunLimits, type RunLimit } from '../run-deadline.js';
import type { LoopFailureCode } from './errors.js';
import type { LoopRunConfig } from './loop-config.js';
import { runLoop, type LoopOutcome, type LoopTools } from './loop-run.js';
import { StepLog, StepLogError } from './step-log.js';
import { renewAdoptedWrites } from './adopted-writes.js';
import { LOOP_TOOLS, READ_ONLY_TOOLS, runTool, type ToolName } from './tools.js';
import { requestFor, wireFor } from './wire/index.js';

/** The provider name every Loop v0 receipt carries: the loop is the harness, the model its provider's. */
export const LOOP_PROVIDER = 'ordivon-loop';
/** Loop v0's version, in its receipts. */
export const LOOP_VERSION = '0';

/** What the loop tells every model before the Host's Context. */
export const LOOP_SYSTEM =
  'You are an agent working in a workspace on a task. The first user message is the task, as the Host compiled it. ' +
  'Use the tools to look at and change the workspace; paths are relative to the workspace. ' +
  'When the task is done (its artifacts written), call `finish` with a short summary. ' +
  'A tool result may say it is unknown: the loop was restarted while it ran; check before repeating it.';

/**
 * Loop v0 (driver `loop`): the Host's own harness over a raw model API. The prompt is the first
 * message; the model works through the workspace tools (tools.ts), every command confined like
 * any agent (`input.confinedIn`); each answer and tool call is durable in the loop's log
 * (step-log.ts) before the next step, so a run stopped anywhere continues where it stood.
 *
 * Failure semantics: resolves, never rejects. `finish` or an answer without tool calls is
 * `ok: true` (stop reason `finished` / `model_stopped`): the artifacts are the Host's to judge. The
 * deadline, the heartbeat, `signal`, a closed generation, an exhausted budget, a failed model call
 * and an unreadable log are failures with the receipt so far (LOOP_FAILURE_CODES).
 */
export async function runLoopDriver(input: DriverRunInput, signal: AbortSignal): Promise<DriverResult> {
  const startedAt = new Date();
  const t0 = performance.now();
  const settings = input.loop;
  if (settings === undefined)
    return driverFailure('invalid_input', 'invalid_input', 'driver loop needs input.loop', { path: 'loop' });
  if (input.model === undefined)
    return driverFailure('invalid_input', 'invalid_input', 'driver loop needs input.model', { path: 'model' });
  let log: StepLog;
  try {
    log = StepLog.open({
      dir: settings.logDir,
      generation: settings.generation,
      runId: input.runId,
      conversation: settings.conversation,
      ...(settings.continuesStopped === true ? { continueEnded: true } : {}),
      contextDigest: input.contextDigest,
      now: () => new Date().toISOString(),
    });
  } catch (error) {
    return logFailure(error);
  }
  renewAdoptedWrites(log.records, input.cwd);
  const stop = new AbortController();
  let limit: RunLimit | undefined;
  const limits = startRunLimits(input, (which) => {
    limit = which;
    stop.abort(new Error(`run limit: ${which}`));
  });
  const onAbort = (): void => stop.abort(signal.reason);
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  const call = modelCall(input, settings);
  const request = requestFor(settings.format);
  let outcome: LoopOutcome;
  try {
    outcome = await runLoop(
      {
        wire: wireFor(settings.format),
        call,
        system: LOOP_SYSTEM,
        prompt: input.prompt,
        tools: loopTools(input, settings),
        maxTurns: settings.maxTurns,
        maxTokens: settings.maxTokens,
        historyChars: settings.historyChars,
        measure: (conversation) => {
          try {
            return JSON.stringify(request(conversation, { ...call, signal: stop.signal }).body).length;
          } catch {
            // A request the wire cannot build (a tool call whose arguments Anthropic cannot take) is
            // not compacted: the call itself fails with the wire's own error.
            return 0;
          }
        },
        stageMaxTurns: settings.stageMaxTurns,
        stageMaxTokens: settings.stageMaxTokens,
        signal: stop.signal,
        onProgress: limits.progress,
      },
      log,
    );
  } catch (error) {
    return logFailure(error);
  } finally {
    limits.clear();
    signal.removeEventListener('abort', onAbort);
    log.close();
  }
  const receipt = loopReceipt(input, outcome, startedAt, t0);
  return loopResult(outcome, receipt, limit);
}

/** A log that cannot be opened, read or written: the run ends without a conversation to continue. */
function logFailure(error: unknown): DriverResult {
  const code = error instanceof StepLogError ? error.code : 'loop_log_unreadable';
  if (code === 'loop_log_closed') return driverFailure('aborted', 'loop_closed', describeThrown(error));
  return driverFailure('provider_error', code, describeThrown(error), { retryable: false });
}

/** The model call's settings, with the key read from the variable the harness names. */
function modelCall(input: DriverRunInput, settings: LoopRunConfig) {
  const apiKey = settings.keyFrom === undefined ? undefined : input.env[settings.keyFrom];
  return {
    baseUrl: settings.baseUrl,
    model: input.model!,
    apiKey,
    maxOutputTokens: settings.maxOutputTokens,
    firstByteTimeoutMs: settings.firstByteTimeoutMs,
    callTimeoutMs: settings.callTimeoutMs,
  };
}

/**
 * The workspace tools, with the commands' environment: the harness's `env` without the
 * variables `envFrom` brought in, so the model's key never reaches a command the model wrote.
 */
function loopTools(input: DriverRunInput, settings: LoopRunConfig): LoopTools {
  const env = Object.fromEntries(Object.entries(input.env).filter(([name]) => !input.envFrom.includes(name)));
  return {
    specs: LOOP_TOOLS,
    run: (call, signal) =>
      runTool(call, {
        workspace: input.cwd,
        sandbox: input.confinedIn,
        env,
        signal,
        commandTimeoutMs: settings.commandTimeoutMs,
        graceMs: input.graceMs,
        maxOutputChars: settings.maxToolOutputChars,
      }),
    rerunnable: (name) => READ_ONLY_TOOLS.has(name as ToolName) || name === 'finish',
  };
}

function loopReceipt(input: DriverRunInput, outcome: LoopOutcome, startedAt: Date, t0: number): HarnessRunReceipt {
  const { artifacts, artifactRefusals } = collectArtifacts(input);
  const receipt: HarnessRunReceipt = {
    driver: input.driver,
    runId: input.runId,
    provider: { name: LOOP_PROVIDER, version: LOOP_VERSION },
    model: input.model!,
    protocolVersion: input.loop!.format,
    contextDigest: input.contextDigest,
    artifacts,
    artifactRefusals,
    usage: {
      inputTokens: outcome.usage.inputTokens,
      outputTokens: outcome.usage.outputTokens,
      turns: outcome.turns,
      turnsRequested: outcome.turnsRequested,
      toolCalls: outcome.toolCalls,
      toolCallsRun: outcome.toolCallsRun,
      toolResultsUnknown: outcome.toolResultsUnknown,
      resumedFrom: outcome.resumedFrom,
      compactions: outcome.compactions,
    },
    counts: {
      messages: outcome.turns,
      thoughts: 0,
      toolItemsStarted: outcome.toolCalls,
      toolItemsCompleted: outcome.toolCalls,
      protocolErrors: outcome.reason === 'model_failed' ? 1 : 0,
    },
    stopReason: outcome.reason,
    confined: input.confinedIn !== undefined,
    timings: {
      startedAt: startedAt.toISOString(),
      endedAt: new Date().toISOString(),
      durationMs: performance.now() - t0,
    },
  };
  if (input.jobId !== undefined) receipt.jobId = input.jobId;
  if (outcome.finalText !== undefined) receipt.finalText = outcome.finalText;
  return receipt;
}

/** The run's result: its receipt as a success, or as the failure its end names. */
function loopResult(outcome: LoopOutcome, receipt: HarnessRunReceipt, limit: RunLimit | undefined): DriverResult {
  const fail = (
    kind: DriverFailureKind,
    code: LoopFailureCode | 'heartbeat_timeout',
    detail: string,
    retryable?: boolean,
  ) => driverFailure(kind, code, detail, { receipt, ...(retryable !== undefined ? { retryable } : {}) });
  switch (outcome.reason) {
    case 'finished':
    case 'model_stopped':
      return { ok: true, receipt };
    case 'aborted':
      if (limit === 'timeout') return fail('timeout', 'loop_timeout', 'the loop did not finish within its deadline');
      if (limit === 'heartbeat')
        return fail('timeout', 'heartbeat_timeout', 'no progress from the model within heartbeatMs');
      return fail('aborted', 'loop_aborted', 'the loop was stopped from outside');
    case 'loop_closed':
      return fail('aborted', 'loop_closed', outcome.detail ?? 'a newer Assignment closed this loop');
    case 'turn_budget':
      return fail('provider_error', 'loop_turn_budget', outcome.detail ?? 'turn budget spent', false);
    case 'token_budget':
      return fail('provider_error', 'loop_token_budget', outcome.detail ?? 'token budget spent', false);
    case 'stage_turn_budget':
      return fail('provider_error', 'loop_turn_budget', outcome.detail ?? "the stage's turn budget spent", false);
    case 'stage_token_budget':
      return fail('provider_error', 'loop_token_budget', outcome.detail ?? "the stage's token budget spent", false);
    case 'model_failed':
      return fail('provider_error', (outcome.code ?? 'model_call_failed') as LoopFailureCode, outcome.detail ?? '');
  }
}
