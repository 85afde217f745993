import { CodedError, isCodedError, type CodedErrorOptions } from '../../base/index.js';

/**
 * The browser adapter's codes: whether the same call may succeed later unchanged, and whether an
 * error of `perform` proves nothing was submitted (`notPerformed`). docs/errors.md lists them; a
 * test checks it does. Every code raised before the form is submitted proves it; after the submit
 * only the site's own named refusal does.
 */
export const BROWSER_EFFECT_CODES = {
  browser_effect_invalid_config: { retryable: false, notPerformed: true },
  browser_effect_invalid_input: { retryable: false, notPerformed: true },
  browser_effect_launch_failed: { retryable: true, notPerformed: true },
  browser_effect_unreachable: { retryable: true, notPerformed: true },
  browser_effect_identity_changed: { retryable: false, notPerformed: true },
  browser_effect_form_invalid: { retryable: false, notPerformed: true },
  browser_effect_refused: { retryable: false, notPerformed: true },
  browser_effect_no_answer: { retryable: false, notPerformed: false },
  browser_effect_evidence_failed: { retryable: false, notPerformed: false },
  browser_effect_lookup_failed: { retryable: true, notPerformed: false },
  browser_effect_observe_failed: { retryable: true, notPerformed: false },
} as const satisfies Record<string, { retryable: boolean; notPerformed: boolean }>;

export type BrowserEffectCode = keyof typeof BROWSER_EFFECT_CODES;

/**
 * Why a browser operation failed, as data. `requestId` names the perform or lookup it belongs to;
 * `siteCode` the site's own refusal code (`browser_effect_refused`), when the page named one.
 */
export class BrowserEffectError extends CodedError<BrowserEffectCode> {
  readonly requestId?: string;
  readonly siteCode?: string;

  constructor(
    code: BrowserEffectCode,
    message: string,
    options: CodedErrorOptions & { requestId?: string | undefined; siteCode?: string | undefined } = {},
  ) {
    super(code, message, { retryable: BROWSER_EFFECT_CODES[code].retryable, ...options });
    if (options.requestId !== undefined) this.requestId = options.requestId;
    if (options.siteCode !== undefined) this.siteCode = options.siteCode;
  }
}

/**
 * Whether an error of `perform` proves the form was never submitted, or the site refused it by name
 * (read from its code, across module copies).
 */
export function browserNotPerformed(error: unknown): boolean {
  return (
    isCodedError(error) &&
    Object.hasOwn(BROWSER_EFFECT_CODES, error.code) &&
    BROWSER_EFFECT_CODES[error.code as BrowserEffectCode].notPerformed
  );
}
