/**
 * Failure codes of Loop v0 (driver `loop`): the `code` of a `{ ok: false }` DriverResult, next to
 * the pool-wide `kind`. The model call's own codes (`model_*`) come from the wire modules.
 */
export const LOOP_FAILURE_CODES = {
  loop_timeout: 'the loop did not finish within input.timeoutMs; the model call or tool command in flight was stopped',
  loop_aborted: "the caller's AbortSignal fired (a cancel, a drain); the model call in flight was aborted",
  loop_closed: "a newer Assignment generation took the loop's conversation over; this generation's loop stopped",
  loop_turn_budget:
    "the loop made its harness's `loop.maxTurns` model calls, or its stage's `budget.turns`, without finishing",
  loop_token_budget:
    "the loop spent its harness's `loop.maxTokens` or its stage's `budget.tokens` (input and output, every turn) without finishing",
  loop_log_unreadable:
    "the loop's log (under the state root's `loops/`) or a tool output it keeps cannot be read or written",
  loop_log_corrupt:
    "a line of the loop's log does not parse, or a compaction it records does not fit the conversation; the detail names the file and line, or the item",
  model_http_error:
    'the model endpoint answered an HTTP error status (the detail has the status and the start of the body)',
  model_unreachable: 'the model endpoint could not be reached (refused, reset, DNS)',
  model_first_byte_timeout: "the model endpoint sent nothing within the harness's `loop.firstByteTimeoutMs`",
  model_call_timeout: "one model call took longer than the harness's `loop.callTimeoutMs`, streaming included",
  model_answer_invalid:
    'the model endpoint streamed an event that does not parse as its wire format (the detail names it)',
  model_call_failed: 'a model call failed in a way none of the model_* codes names (a defect)',
} as const;
export type LoopFailureCode = keyof typeof LOOP_FAILURE_CODES;
