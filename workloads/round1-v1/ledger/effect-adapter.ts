import { isCodedError } from '../../../base/index.js';
import type { EffectAdapter } from '../../../frontier/index.js';
import { ledgerAdapter } from './client.js';
import type { LedgerCode } from './ledger-error.js';
import type { LedgerInput } from './ledger-schema.js';

/**
 * The ledger's codes that prove a `perform` appended nothing: the ledger refused it (or the client
 * did not send it), or no connection was made. `effect_response_lost` is not one of them: the
 * entry may be committed, so the Host makes the Effect unknown and looks it up.
 */
const NOT_PERFORMED: ReadonlySet<LedgerCode> = new Set<LedgerCode>([
  'ledger_unavailable',
  'ledger_invalid_request',
  'ledger_route_not_found',
  'ledger_body_too_large',
  'ledger_storage_failed',
]);

/** Whether a `perform` error of the ledger client proves nothing was appended. */
export function ledgerNotPerformed(error: unknown): boolean {
  return isCodedError(error) && NOT_PERFORMED.has(error.code as LedgerCode);
}

/**
 * The ledger at `url` as the Host's Effect adapter (`openHost({ effectAdapters: { ledger } })`):
 * the candidate's operation and target become the ledger entry's, its input the entry's input;
 * `lookup` returns every entry under the request id; the endpoint recorded in each intent is `url`.
 */
export function ledgerEffectAdapter(url: string): EffectAdapter {
  const ledger = ledgerAdapter(url);
  return {
    endpoint: url,
    // The client parses the input (JSON, names in bounds) and refuses what does not parse, unsent.
    perform: (requestId, input, { operation, target }) =>
      ledger.perform(requestId, { operation, target, input: input as LedgerInput['input'] }),
    lookup: (requestId) => ledger.lookup(requestId),
    notPerformed: ledgerNotPerformed,
  };
}
