import { describeIssues, zodIssue } from '../../../base/index.js';
import { z } from 'zod';
import { httpJson, type HttpOutcome } from './ledger-http.js';
import { LedgerError, type LedgerCode } from './ledger-error.js';
import {
  EntriesAnswer,
  ErrorAnswer,
  FaultState,
  LedgerInput,
  LookupAnswer,
  PerformAnswer,
  PerformRequest,
  type FaultMode,
  type LedgerEntry,
} from './ledger-schema.js';

export { readLedgerFile } from './ledger-db.js';
export { startLedger, type LedgerExit, type LedgerProcess, type StartLedgerOptions } from './ledger-process.js';

/**
 * The ledger as an Effect adapter (issue 19's shape): `perform` appends, `lookup` finds by request
 * id. Every answer is parsed; a receipt is only ever one the ledger sent.
 */
export interface LedgerAdapter {
  /**
   * Appends one entry under `requestId` and resolves with its receipt. The ledger is not
   * idempotent: a second call with the same id appends a second entry.
   *
   * Rejects with a `LedgerError` naming `requestId`:
   * - `effect_response_lost` when the request may have reached the ledger and no receipt came back
   *   (the connection dropped, the server died, the answer did not parse): the entry may be
   *   committed; reconcile with `lookup(requestId)`, never by performing again;
   * - `ledger_unavailable` when no connection could be made: nothing was sent;
   * - the ledger's own code (`ledger_invalid_request`, `ledger_storage_failed`, …) when it answered
   *   with a refusal: nothing was appended.
   */
  perform(requestId: string, input: LedgerInput): Promise<LedgerEntry>;
  /**
   * Every entry committed under `requestId` (none, one or more), read from the ledger. Changes
   * nothing, so any failure (`ledger_unavailable`, `ledger_answer_invalid`) may be retried.
   */
  lookup(requestId: string): Promise<LedgerEntry[]>;
}

/** The codes the server answers with (the others are the client's own). */
const SERVER_CODES = z.enum([
  'ledger_invalid_request',
  'ledger_route_not_found',
  'ledger_body_too_large',
  'ledger_storage_failed',
] satisfies LedgerCode[]);

/** The ledger's refusal as a `LedgerError`, or `undefined` when the answer is not one. */
function refusalOf(outcome: Extract<HttpOutcome, { kind: 'answer' }>, requestId?: string): LedgerError | undefined {
  const answer = ErrorAnswer.safeParse(outcome.body);
  const code = SERVER_CODES.safeParse(answer.data?.code);
  if (!answer.success || !code.success) return undefined;
  return new LedgerError(code.data, answer.data.message, { path: answer.data.path, requestId });
}

/**
 * A read-only call: `lost` and `refused` are the same to it (nothing changed either way), and an
 * answer is either the schema's or a refusal.
 */
async function read<S extends z.ZodType>(
  url: string,
  method: 'GET' | 'POST',
  path: string,
  schema: S,
  body?: unknown,
  requestId?: string,
): Promise<z.output<S>> {
  const outcome = await httpJson(url, method, path, body);
  if (outcome.kind !== 'answer')
    throw new LedgerError('ledger_unavailable', `${method} ${url}${path}: ${outcome.message}`, { requestId });
  if (outcome.status !== 200) {
    const refusal = refusalOf(outcome, requestId);
    if (refusal !== undefined) throw refusal;
  }
  const parsed = schema.safeParse(outcome.body);
  if (outcome.status === 200 && parsed.success) return parsed.data;
  const why = parsed.success ? `status ${outcome.status}` : describeIssues(parsed.error);
  throw new LedgerError('ledger_answer_invalid', `${method} ${url}${path}: the answer does not parse (${why})`, {
    requestId,
  });
}

/** The Effect adapter over the ledger at `url` (`http://127.0.0.1:PORT`). */
export function ledgerAdapter(url: string): LedgerAdapter {
  return {
    async perform(requestId, input) {
      // The input is parsed on its own first: spread into the request, a stray `requestId` key of
      // its own would replace the caller's.
      const own = LedgerInput.safeParse(input);
      const request = own.success ? PerformRequest.safeParse({ requestId, ...own.data }) : own;
      if (!request.success) {
        const issue = zodIssue('ledger_invalid_request', request.error);
        throw new LedgerError(issue.code, `not sent: ${issue.message}`, { path: issue.path, requestId });
      }
      const outcome = await httpJson(url, 'POST', '/perform', request.data);
      if (outcome.kind === 'refused')
        throw new LedgerError('ledger_unavailable', `${url} refused the connection; nothing was sent`, { requestId });
      const lost = (why: string) =>
        new LedgerError('effect_response_lost', `perform ${requestId}: ${why}; the entry may be committed`, {
          requestId,
        });
      if (outcome.kind === 'lost') throw lost(outcome.message);
      if (outcome.status === 200) {
        const answer = PerformAnswer.safeParse(outcome.body);
        if (answer.success && answer.data.receipt.requestId === requestId) return answer.data.receipt;
        throw lost(`the answer is not a receipt for this request`);
      }
      // A refusal the ledger names appended nothing; any other answer could follow a commit.
      throw refusalOf(outcome, requestId) ?? lost(`status ${outcome.status} without a ledger refusal`);
    },
    lookup: async (requestId) =>
      (await read(url, 'GET', `/lookup?requestId=${encodeURIComponent(requestId)}`, LookupAnswer, undefined, requestId))
        .receipts,
  };
}

/** Every entry, as the running server reports it (the file itself: `readLedgerFile`). */
export async function ledgerEntries(url: string): Promise<LedgerEntry[]> {
  return (await read(url, 'GET', '/entries', EntriesAnswer)).entries;
}

/** Sets the running server's fault switch: the next `times` performs (all, if omitted) hit `mode`. */
export function setLedgerFault(url: string, mode: FaultMode, times?: number): Promise<FaultState> {
  return read(url, 'POST', '/faults', FaultState, times === undefined ? { mode } : { mode, times });
}
