import type { CodedErrorOptions } from '../../../base/index.js';
import { WorldError, type CodeTable } from '../../shared/world-error.js';

/**
 * The codes of the Round 1 ledger backend, each with whether the same call may succeed later
 * unchanged (docs/errors.md lists them; a test checks it does). The server answers the request
 * codes as `{code, path, message}` with an HTTP status; the client raises all of them.
 *
 * What a failed `perform` means for the ledger is in its code, never in a message: after
 * `effect_response_lost` the entry may be committed; after any other code nothing was appended.
 */
export const LEDGER_CODES = {
  effect_response_lost: {
    retryable: false,
    meaning:
      'the perform may have reached the ledger and no receipt came back (the connection dropped, the server died, ' +
      'the answer did not parse): the outcome is unknown until lookup(requestId) says; performing again appends again',
  },
  ledger_unavailable: {
    retryable: true,
    meaning: 'no connection could be made (nothing was sent), or a read-only call got no answer',
  },
  ledger_answer_invalid: { retryable: true, meaning: 'a read-only call got an answer that does not parse' },
  ledger_invalid_request: { retryable: false, meaning: '400: a body, query or input does not parse; `path` names it' },
  ledger_route_not_found: { retryable: false, meaning: '404: no such route with this method' },
  ledger_body_too_large: { retryable: false, meaning: "413: the body is over the server's limit" },
  ledger_storage_failed: {
    retryable: true,
    meaning: '500: the database refused the write (nothing appended) or the read',
  },
  ledger_start_failed: {
    retryable: false,
    meaning: 'the server exited before its port line: the database file or the listen failed',
  },
  ledger_usage: { retryable: false, meaning: "the server's command line does not parse (exit 2)" },
} as const satisfies CodeTable;

export type LedgerCode = keyof typeof LEDGER_CODES;

/**
 * Why a ledger call failed, as data; `requestId` names the perform or lookup it belongs to.
 * `retryable` is the code's (`LEDGER_CODES`) unless given.
 */
export class LedgerError extends WorldError<LedgerCode> {
  static override readonly codes = LEDGER_CODES;
  readonly requestId?: string;

  constructor(code: LedgerCode, message: string, options: CodedErrorOptions & { requestId?: string | undefined } = {}) {
    super(code, message, options);
    if (options.requestId !== undefined) this.requestId = options.requestId;
  }
}
