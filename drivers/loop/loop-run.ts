import { applyCompaction, planCompaction, sentItems, type History } from './compaction.js';
import {
  ModelCallError,
  type Conversation,
  type ModelCall,
  type ModelTurn,
  type ModelWire,
  type ToolCall,
  type ToolSpec,
} from './conversation.js';
import { STAGE_BUDGET_ENDS, StepLogError, type LogRecord, type LoggedOutcome, type StepLog } from './step-log.js';

/** What one tool call came to, as the loop needs it (tools.ts `ToolOutcome`, without the run's details). */
export interface ToolResult {
  ok: boolean;
  output: string;
  code?: string;
  finish?: { summary: string };
  exitCode?: number | null;
}

/** The tools on offer: their specs, how to run one, and which may run again after a crash. */
export interface LoopTools {
  specs: readonly ToolSpec[];
  run(call: ToolCall, signal: AbortSignal): Promise<ToolResult>;
  /** True for a tool whose call changes nothing (list, read, search): one whose result was lost may run again. */
  rerunnable(name: string): boolean;
}

/** Everything one loop run needs besides its log. */
export interface LoopSetup {
  wire: ModelWire;
  call: Omit<ModelCall, 'signal' | 'onProgress'>;
  system: string;
  /** The Host's compiled Context: the first message, always. */
  prompt: string;
  tools: LoopTools;
  /** Model calls the run may make (adopted ones count). */
  maxTurns: number;
  /** Tokens (in + out, adopted turns included) after which no model call is made; absent: no bound. */
  maxTokens?: number | undefined;
  /** Characters of a request past which the history is compacted before the call (compaction.ts). */
  historyChars: number;
  /** The characters `conversation` comes to as the wire sends it (its request body as JSON). */
  measure(conversation: Conversation): number;
  /** The stage's budget: model calls and tokens since the conversation last went over it (`budgetSpent`). */
  stageMaxTurns?: number | undefined;
  stageMaxTokens?: number | undefined;
  signal: AbortSignal;
  onProgress?: () => void;
}

/** How a loop run ended. */
export type LoopEndReason =
  | 'finished'
  | 'model_stopped'
  | 'turn_budget'
  | 'token_budget'
  | 'stage_turn_budget'
  | 'stage_token_budget'
  | 'aborted'
  | 'loop_closed'
  | 'model_failed';

/** Model calls and tokens the conversation had spent where its stage's budget starts: its last stage-budget end, or nothing. */
export function budgetSpent(records: readonly LogRecord[]): { turns: number; tokens: number } {
  let turns = 0;
  let tokens = 0;
  let spent = { turns: 0, tokens: 0 };
  for (const record of records) {
    if (record.t === 'model_response') {
      turns++;
      tokens += record.answer.usage.inputTokens + record.answer.usage.outputTokens;
    } else if (record.t === 'end' && STAGE_BUDGET_ENDS.has(record.reason)) spent = { turns, tokens };
  }
  return spent;
}

/** What the run did, for the receipt: its end, its totals and what a restart did not do again. */
export interface LoopOutcome {
  reason: LoopEndReason;
  /** The failure's code (`model_http_error`, …) for `model_failed`. */
  code?: string;
  detail?: string;
  /** The model's summary from `finish`, or its last text. */
  finalText?: string;
  /** Model calls answered, adopted ones included. */
  turns: number;
  /** Model calls this run made. */
  turnsRequested: number;
  usage: { inputTokens: number; outputTokens: number };
  toolCalls: number;
  /** Tool calls this run ran (adopted results are not run again). */
  toolCallsRun: number;
  /** Calls whose result a crash lost and that were not run again (reported to the model as unknown). */
  toolResultsUnknown: number;
  /** Records this run found already durable (a restart's or an older generation's). */
  resumedFrom: number;
  /** Times the history was compacted, adopted ones included. */
  compactions: number;
}

/** The model is told this for a call whose result was lost: it ran, or began to, and is not run again blindly. */
export const UNKNOWN_RESULT =
  'The result of this call is unknown: the loop was stopped while it ran, so it may have run in part or in full. ' +
  'It was not run again. Check the workspace before you repeat it.';

/** How an operator's steer reads to the model: a user message that says whose it is. */
export function steerMessage(text: string): string {
  return `A message from the operator supervising this task: ${text}`;
}

interface Replay extends History {
  turns: number;
  usage: { inputTokens: number; outputTokens: number };
  last: ModelTurn | undefined;
  intended: Set<string>;
  resolved: Set<string>;
  finish: { summary: string } | undefined;
  toolCalls: number;
  compactions: number;
}

/** The conversation and the counts the durable records describe. */
function replay(records: readonly LogRecord[], prompt: string, outputOf: (o: LoggedOutcome) => string): Replay {
  const state: Replay = {
    items: [{ kind: 'user', text: prompt, context: true }],
    stubbed: new Set(),
    omitted: undefined,
    turns: 0,
    usage: { inputTokens: 0, outputTokens: 0 },
    last: undefined,
    intended: new Set(),
    resolved: new Set(),
    finish: undefined,
    toolCalls: 0,
    compactions: 0,
  };
  for (const record of records) {
    if (record.t === 'model_response') {
      state.turns++;
      state.usage.inputTokens += record.answer.usage.inputTokens;
      state.usage.outputTokens += record.answer.usage.outputTokens;
      state.last = record.answer;
      state.items.push({ kind: 'assistant', text: record.answer.text, toolCalls: record.answer.toolCalls });
    } else if (record.t === 'tool_intent') state.intended.add(record.call.id);
    else if (record.t === 'tool_result') {
      state.resolved.add(record.callId);
      state.toolCalls++;
      if (record.outcome.finish) state.finish = record.outcome.finish;
      state.items.push({
        kind: 'tool_result',
        callId: record.callId,
        name: record.name,
        output: outputOf(record.outcome),
      });
    } else if (record.t === 'steer') state.items.push({ kind: 'user', text: steerMessage(record.text) });
    else if (record.t === 'compact') {
      const misfit = applyCompaction(state, record);
      if (misfit !== undefined) throw new StepLogError('loop_log_corrupt', misfit);
      state.compactions++;
    }
  }
  return state;
}

/**
 * Runs the loop from where its log stands: each step's model answer and tool call intent are
 * durable (one sync) before the tool runs, and its result before the next model call; an
 * operator's steer waiting in the inbox is recorded and given to the model before its next call,
 * so a restart neither asks the model again for an answered turn nor runs a call whose result is
 * recorded. A call whose intent is recorded and
 * whose result is not is run again only when it changes nothing; otherwise the model is told its
 * result is unknown. Never rejects for a model or tool failure: they end the run as data.
 */
export async function runLoop(setup: LoopSetup, log: StepLog): Promise<LoopOutcome> {
  const resumedFrom = log.records.filter((r) => r.t !== 'start').length;
  const state = replay(log.records, setup.prompt, (o) => log.outputOf(o));
  const counts = { turnsRequested: 0, toolCallsRun: 0, toolResultsUnknown: 0 };
  const before = budgetSpent(log.records);
  const end = (reason: LoopEndReason, extra: Partial<LoopOutcome> = {}): LoopOutcome => {
    log.append({ t: 'end', reason });
    const finalText = state.finish?.summary ?? (state.last?.text || undefined);
    return {
      reason,
      turns: state.turns,
      usage: { ...state.usage },
      toolCalls: state.toolCalls,
      compactions: state.compactions,
      resumedFrom,
      ...counts,
      ...(finalText !== undefined ? { finalText } : {}),
      ...extra,
    };
  };
  for (;;) {
    if (state.finish) return end('finished');
    if (log.closed()) return end('loop_closed', { detail: 'a newer Assignment closed this generation' });
    if (setup.signal.aborted) return end('aborted');
    const pending = (state.last?.toolCalls ?? []).filter((call) => !state.resolved.has(call.id));
    if (pending.length > 0) {
      await resolveCall(setup, log, state, counts, pending[0]!);
      continue;
    }
    if (state.last !== undefined && state.last.toolCalls.length === 0) return end('model_stopped');
    if (state.turns >= setup.maxTurns) return end('turn_budget', { detail: `${state.turns} model turns` });
    const spent = state.usage.inputTokens + state.usage.outputTokens;
    if (setup.maxTokens !== undefined && spent >= setup.maxTokens)
      return end('token_budget', { detail: `${spent} tokens of ${setup.maxTokens}` });
    const stageTurns = state.turns - before.turns;
    if (setup.stageMaxTurns !== undefined && stageTurns >= setup.stageMaxTurns)
      return end('stage_turn_budget', { detail: `${stageTurns} model turns of the stage's ${setup.stageMaxTurns}` });
    const stageTokens = spent - before.tokens;
    if (setup.stageMaxTokens !== undefined && stageTokens >= setup.stageMaxTokens)
      return end('stage_token_budget', { detail: `${stageTokens} tokens of the stage's ${setup.stageMaxTokens}` });
    for (const steer of log.unreadSteers()) {
      log.append({ t: 'steer', text: steer.text, source: steer.source });
      state.items.push({ kind: 'user', text: steerMessage(steer.text) });
    }
    const failed = await askModel(setup, log, state, counts);
    if (failed !== undefined) return end(failed.reason, failed);
  }
}

/**
 * One model call, its request and its answer recorded; a failure is returned, not thrown. The
 * history is compacted first when the request would pass its bound, and the compaction recorded
 * before the request.
 */
async function askModel(
  setup: LoopSetup,
  log: StepLog,
  state: Replay,
  counts: { turnsRequested: number },
): Promise<{ reason: LoopEndReason; code?: string; detail?: string } | undefined> {
  const compaction = planCompaction(state, {
    bound: setup.historyChars,
    turn: state.turns,
    size: (items) => setup.measure({ system: setup.system, items, tools: setup.tools.specs }),
  });
  if (compaction !== undefined) {
    // Decided from the history and the bound alone: a lost record is decided the same way again.
    log.append({ t: 'compact', ...compaction }, false);
    applyCompaction(state, compaction);
    state.compactions++;
  }
  // Durable with the answer's: a request whose answer a crash lost is made again either way.
  log.append({ t: 'model_request', turn: state.turns }, false);
  counts.turnsRequested++;
  let answer: ModelTurn;
  try {
    answer = await setup.wire(
      { system: setup.system, items: sentItems(state), tools: setup.tools.specs },
      { ...setup.call, signal: setup.signal, ...(setup.onProgress ? { onProgress: setup.onProgress } : {}) },
    );
  } catch (error) {
    if (setup.signal.aborted) return { reason: 'aborted' };
    const code = error instanceof ModelCallError ? error.code : 'model_call_failed';
    return { reason: 'model_failed', code, detail: (error as Error).message };
  }
  // Durable with the next record, which is synced: the call's intent before the tool runs, or the end.
  log.append({ t: 'model_response', turn: state.turns, answer }, false);
  state.turns++;
  state.usage.inputTokens += answer.usage.inputTokens;
  state.usage.outputTokens += answer.usage.outputTokens;
  state.last = answer;
  state.items.push({ kind: 'assistant', text: answer.text, toolCalls: answer.toolCalls });
  return undefined;
}

/** Runs one pending call (or reports its lost result as unknown) and records the result. */
async function resolveCall(
  setup: LoopSetup,
  log: StepLog,
  state: Replay,
  counts: { toolCallsRun: number; toolResultsUnknown: number },
  call: ToolCall,
): Promise<void> {
  let result: ToolResult;
  if (state.intended.has(call.id) && !setup.tools.rerunnable(call.name)) {
    result = { ok: false, output: UNKNOWN_RESULT, code: 'tool_result_unknown' };
    counts.toolResultsUnknown++;
  } else {
    if (!state.intended.has(call.id)) log.append({ t: 'tool_intent', call });
    state.intended.add(call.id);
    result = await setup.tools.run(call, setup.signal);
    counts.toolCallsRun++;
  }
  const outcome: LoggedOutcome = {
    ok: result.ok,
    ...log.keepOutput(result.output),
    ...(result.code !== undefined ? { code: result.code } : {}),
    ...(result.finish !== undefined ? { finish: result.finish } : {}),
    ...(result.exitCode !== undefined ? { exitCode: result.exitCode } : {}),
  };
  log.append({ t: 'tool_result', callId: call.id, name: call.name, outcome });
  state.resolved.add(call.id);
  state.toolCalls++;
  if (result.finish) state.finish = result.finish;
  state.items.push({ kind: 'tool_result', callId: call.id, name: call.name, output: result.output });
}
