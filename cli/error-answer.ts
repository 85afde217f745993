import type { CodedError, ErrorData } from '../base/index.js';

/** What the CLI (`--json`) and the control API answer of an error: `{code, message, path?}`. */
export type ErrorAnswer = Omit<ErrorData, 'retryable'>;

/**
 * An error's answer, read from its fields (`toData()`), never from its message. `retryable` is
 * not part of the answers (the README's `{error: {code, message, path?}}`): the code says it.
 */
export function errorAnswer(error: CodedError): ErrorAnswer {
  const { retryable: _retryable, ...answer } = error.toData();
  return answer;
}
