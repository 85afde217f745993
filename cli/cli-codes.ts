import { HOST_ERROR_CODES } from '../kernel/index.js';
import { STORE_ERROR_CODES } from '../store/index.js';
import { CLI_ERROR_CODES, type CliErrorCode } from './cli-io.js';
import { API_ERROR_CODES } from './service/http-io.js';

const CLI_CODES: ReadonlySet<string> = new Set([
  ...CLI_ERROR_CODES,
  ...API_ERROR_CODES,
  ...HOST_ERROR_CODES,
  ...STORE_ERROR_CODES,
]);

/** Whether `code` (from a service's JSON answer) is one the CLI reports. */
export function isCliErrorCode(code: string): code is CliErrorCode {
  return CLI_CODES.has(code);
}
