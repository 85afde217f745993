import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import { CodedError, zodIssue, type Issue } from '../../../base/index.js';
import type { ProviderCode } from './provider-error.js';

// The server's request boundary: refusals as data, parses that name the field, the body reader.

const BODY_LIMIT = 1024 * 1024;

/** A refusal the server answers: a coded error with its HTTP status and the `{code, path, message}` body. */
export class Refusal extends CodedError<ProviderCode> {
  readonly answer: Issue<ProviderCode>;

  constructor(
    readonly status: number,
    issue: Issue<ProviderCode>,
  ) {
    super(issue.code, issue.message, { path: issue.path });
    this.answer = issue;
  }
}

export const refuse = (status: number, code: ProviderCode, message: string, path = '(root)') =>
  new Refusal(status, { code, path, message });

/** A parse at the boundary; a failure is 400 naming the field under `prefix` (`headers.if-match`). */
export function parse<S extends z.ZodType>(schema: S, value: unknown, prefix?: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = zodIssue('provider_invalid_request', parsed.error);
  const path = prefix === undefined ? issue.path : issue.path === '(root)' ? prefix : `${prefix}.${issue.path}`;
  throw new Refusal(400, { ...issue, path });
}

export async function readBody(req: IncomingMessage): Promise<{ text: string; json: unknown }> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Read to the end even past the limit: leaving the loop early destroys the request, and with it
  // the socket the refusal has to be answered on.
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= BODY_LIMIT) chunks.push(chunk);
  }
  if (size > BODY_LIMIT) throw refuse(413, 'provider_body_too_large', `over ${BODY_LIMIT} bytes`);
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return { text, json: JSON.parse(text) };
  } catch (error) {
    throw refuse(400, 'provider_invalid_request', `the body is not JSON: ${(error as Error).message}`);
  }
}

/** `If-Match` as a version: the ETag's quotes (and a weak `W/`) are not part of it. */
export const matchValue = (header: string) => header.replace(/^W\//, '').replace(/^"(.*)"$/, '$1');

/** A database call; whatever it throws is the storage's failure (a write that throws committed nothing). */
export function storage<T>(call: () => T): T {
  try {
    return call();
  } catch (error) {
    throw refuse(500, 'provider_storage_failed', String(error));
  }
}
