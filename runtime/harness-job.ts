import { DriverResult, type DriverRunInput } from '../drivers/receipt.js';
import { describeIssues, zodIssue } from '../base/index.js';
import type { StopReason } from './job-record.js';

/**
 * Runs one provider run and returns its result as data. The Host plugs the piscina driver pool in
 * here; it must honour `signal` (abort = stop the provider and return) and should never throw.
 */
export type HarnessExecutor = (input: DriverRunInput, signal: AbortSignal) => Promise<DriverResult>;

export interface HarnessOutcome {
  result?: DriverResult;
  stopReason?: StopReason;
  error?: { code: string; detail: string; path?: string };
}

/**
 * Calls `executor` with a signal that aborts after `timeoutMs` or when `cancel` aborts. Never
 * rejects: a thrown executor error becomes `harness_threw`, a result that fails the `DriverResult`
 * schema becomes `harness_result_invalid`, and an executor still running `graceMs` after the abort is
 * given up on with `harness_unresponsive` (its eventual result is ignored).
 */
export async function runHarness(
  executor: HarnessExecutor,
  input: DriverRunInput,
  limits: { timeoutMs: number; graceMs: number },
  cancel: AbortSignal,
): Promise<HarnessOutcome> {
  const controller = new AbortController();
  let stopReason: StopReason | undefined;
  let giveUp: (() => void) | undefined;
  const abandoned = new Promise<'unresponsive'>((resolve) => (giveUp = () => resolve('unresponsive')));
  let graceTimer: NodeJS.Timeout | undefined;
  const stop = (reason: StopReason): void => {
    if (stopReason !== undefined) return;
    stopReason = reason;
    controller.abort(reason);
    graceTimer = setTimeout(() => giveUp?.(), limits.graceMs);
  };
  const onCancel = (): void => stop(cancel.reason as StopReason);
  const timer = setTimeout(() => stop('timeout'), limits.timeoutMs);
  if (cancel.aborted) onCancel();
  else cancel.addEventListener('abort', onCancel, { once: true });

  const outcome: HarnessOutcome = {};
  try {
    const raced = await Promise.race([Promise.resolve().then(() => executor(input, controller.signal)), abandoned]);
    if (raced === 'unresponsive') {
      outcome.error = {
        code: 'harness_unresponsive',
        detail: `executor did not return within ${limits.graceMs} ms of the abort`,
      };
    } else {
      const parsed = DriverResult.safeParse(raced);
      if (parsed.success) outcome.result = parsed.data;
      else {
        const { path } = zodIssue('harness_result_invalid', parsed.error);
        outcome.error = { code: 'harness_result_invalid', detail: describeIssues(parsed.error), path };
      }
    }
  } catch (error) {
    outcome.error = { code: 'harness_threw', detail: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
    clearTimeout(graceTimer);
    cancel.removeEventListener('abort', onCancel);
  }
  if (stopReason !== undefined) outcome.stopReason = stopReason;
  return outcome;
}
