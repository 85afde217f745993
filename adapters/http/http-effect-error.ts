import { CodedError, isCodedError, type CodedErrorOptions } from '../../base/index.js';

/**
 * The HTTP adapter's codes, each with whether the same call may succeed later unchanged and
 * whether, raised by `perform`, it proves nothing was performed (docs/errors.md lists them).
 */
export const HTTP_EFFECT_CODES = {
  http_effect_no_answer: {
    retryable: false,
    notPerformed: false,
    meaning:
      'the request may have reached the provider and no usable answer came back (timeout, dropped connection, ' +
      'an answer no refusal rule covers, a body that does not parse): look it up, never send it again blindly',
  },
  http_effect_unreachable: {
    retryable: true,
    notPerformed: true,
    meaning: 'no connection could be made (connection refused): nothing was sent',
  },
  http_effect_refused: {
    retryable: false,
    notPerformed: true,
    meaning:
      "the provider answered a refusal the config's `refusal` rule says commits nothing; the message names its status and code",
  },
  http_effect_operation_unknown: {
    retryable: false,
    notPerformed: true,
    meaning: 'the intent names an operation the config does not have: nothing was sent',
  },
  http_effect_invalid_input: {
    retryable: false,
    notPerformed: true,
    meaning:
      'the config could not build a request from the input (its builder threw, or the body is not JSON): nothing was sent',
  },
  http_effect_config_invalid: {
    retryable: false,
    notPerformed: true,
    meaning: 'the adapter config does not parse; `path` names the field',
  },
  http_effect_lookup_failed: {
    retryable: true,
    notPerformed: false,
    meaning: 'a lookup or observe got no answer, or an answer it cannot read: nothing is known yet, ask again',
  },
  http_effect_id_file_invalid: {
    retryable: false,
    notPerformed: false,
    meaning: "a complete line of the provider-id file does not parse: the file is not this adapter's",
  },
} as const satisfies Record<string, { retryable: boolean; notPerformed: boolean; meaning: string }>;

export type HttpEffectCode = keyof typeof HTTP_EFFECT_CODES;

/** Why an HTTP Effect call failed, as data; `status` and `providerCode` when the provider answered. */
export class HttpEffectError extends CodedError<HttpEffectCode> {
  readonly status?: number;
  readonly providerCode?: string;

  constructor(
    code: HttpEffectCode,
    message: string,
    options: CodedErrorOptions & { status?: number | undefined; providerCode?: string | undefined } = {},
  ) {
    super(code, message, { retryable: HTTP_EFFECT_CODES[code].retryable, ...options });
    if (options.status !== undefined) this.status = options.status;
    if (options.providerCode !== undefined) this.providerCode = options.providerCode;
  }
}

/** Whether an error `perform` threw proves nothing was performed (read from its code, across module copies). */
export function httpNotPerformed(error: unknown): boolean {
  return (
    isCodedError(error) &&
    Object.hasOwn(HTTP_EFFECT_CODES, error.code) &&
    HTTP_EFFECT_CODES[error.code as HttpEffectCode].notPerformed
  );
}
