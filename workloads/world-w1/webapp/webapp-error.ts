import { serverCodes, WorldError, type CodeTable } from '../../shared/world-error.js';

/**
 * The codes of the World W1 web app, each with whether the same call may succeed later unchanged
 * (docs/errors.md lists them; a test checks it does). The server answers the request codes with
 * an HTTP status: as an HTML page carrying `<meta name="error-code">` on the browser routes, as
 * `{code, path, message}` on the control routes. Every refusal appended nothing.
 */
export const WEBAPP_CODES = {
  webapp_invalid_request: { retryable: false, meaning: '400: a form, query or control body does not parse' },
  webapp_item_not_found: { retryable: false, meaning: '404: no item of that name' },
  webapp_item_changed: {
    retryable: false,
    meaning: "409: the submitted version is not the item's current one; nothing appended",
  },
  webapp_route_not_found: { retryable: false, meaning: '404: no such route with this method' },
  webapp_body_too_large: { retryable: false, meaning: "413: the body is over the server's limit" },
  webapp_storage_failed: { retryable: true, meaning: '500: the database refused the write or the read' },
  ...serverCodes('webapp', { line: 'port line', calls: 'a control call' }),
} as const satisfies CodeTable;

export type WebappCode = keyof typeof WEBAPP_CODES;

/** Why a web-app call failed, as data; `retryable` is the code's (`WEBAPP_CODES`) unless given. */
export class WebappError extends WorldError<WebappCode> {
  static override readonly codes = WEBAPP_CODES;
}
