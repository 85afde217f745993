import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import { CodedError, zodIssue, type Issue } from '../../base/index.js';

// The request boundary of the worlds' servers (the ledger, the provider, the web app): refusals as
// data, parses that name the field, the body reader, the JSON answer. Each world names its codes.

/** A refusal a server answers: a coded error with its HTTP status and the `{code, path, message}` body. */
export class Refusal<C extends string = string> extends CodedError<C> {
  readonly answer: Issue<C>;

  constructor(
    readonly status: number,
    issue: Issue<C>,
  ) {
    super(issue.code, issue.message, { path: issue.path });
    this.answer = issue;
  }
}

/** A world's codes for what every boundary refuses, and its body limit. */
export interface BoundaryCodes<C extends string> {
  /** 400: a body, query, header or path that does not parse (or a body that is not JSON). */
  invalid: C;
  /** 413: a body over `bodyLimit` bytes. */
  tooLarge: C;
  /** 500: a database call threw (see `storage`). */
  storageFailed: C;
  /** 500: anything else a route threw. */
  internal: C;
  bodyLimit: number;
}

/** The boundary of one world's server, under its codes. */
export interface Boundary<C extends string> {
  refuse(status: number, code: C, message: string, path?: string): Refusal<C>;
  /** A parse at the boundary; a failure is 400 naming the field under `prefix` (`headers.if-match`). */
  parse<S extends z.ZodType>(schema: S, value: unknown, prefix?: string): z.output<S>;
  /** The body as text; over the limit, 413. */
  readBody(req: IncomingMessage): Promise<string>;
  /** The body as text and as JSON; not JSON, 400. */
  readJson(req: IncomingMessage): Promise<{ text: string; json: unknown }>;
  /** The JSON body parsed by `schema`. */
  readParsed<S extends z.ZodType>(req: IncomingMessage, schema: S): Promise<z.output<S>>;
  /** A database call; whatever it throws is the storage's failure (a write that throws committed nothing). */
  storage<T>(call: () => T): T;
  /**
   * The request listener of `route`: whatever it throws is answered by `refused` as a Refusal
   * (one it did not throw as such is `internal`, 500).
   */
  listener(
    route: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
    refused: (req: IncomingMessage, res: ServerResponse, refusal: Refusal<C>) => void,
  ): (req: IncomingMessage, res: ServerResponse) => void;
}

export function boundary<C extends string>(codes: BoundaryCodes<C>): Boundary<C> {
  const refuse = (status: number, code: C, message: string, path = '(root)') =>
    new Refusal(status, { code, path, message });
  const parse = <S extends z.ZodType>(schema: S, value: unknown, prefix?: string): z.output<S> => {
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    const issue = zodIssue(codes.invalid, parsed.error);
    const path = prefix === undefined ? issue.path : issue.path === '(root)' ? prefix : `${prefix}.${issue.path}`;
    throw new Refusal(400, { ...issue, path });
  };
  const readBody = async (req: IncomingMessage): Promise<string> => {
    const chunks: Buffer[] = [];
    let size = 0;
    // Read to the end even past the limit: leaving the loop early destroys the request, and with it
    // the socket the refusal has to be answered on.
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size <= codes.bodyLimit) chunks.push(chunk);
    }
    if (size > codes.bodyLimit) throw refuse(413, codes.tooLarge, `over ${codes.bodyLimit} bytes`);
    return Buffer.concat(chunks).toString('utf8');
  };
  const readJson = async (req: IncomingMessage) => {
    const text = await readBody(req);
    try {
      return { text, json: JSON.parse(text) as unknown };
    } catch (error) {
      throw refuse(400, codes.invalid, `the body is not JSON: ${(error as Error).message}`);
    }
  };
  return {
    refuse,
    parse,
    readBody,
    readJson,
    readParsed: async (req, schema) => parse(schema, (await readJson(req)).json),
    storage(call) {
      try {
        return call();
      } catch (error) {
        throw refuse(500, codes.storageFailed, String(error));
      }
    },
    listener: (route, refused) => (req, res) => {
      route(req, res).catch((error: unknown) => {
        refused(
          req,
          res,
          error instanceof Refusal ? (error as Refusal<C>) : refuse(500, codes.internal, String(error)),
        );
      });
    },
  };
}

/** Query or form parameters as an object; a parameter given twice becomes an array, which a schema refuses. */
export function paramsOf(params: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(params.keys())) {
    const values = params.getAll(key);
    out[key] = values.length === 1 ? values[0]! : values;
  }
  return out;
}

/** A JSON answer: `body` with its type and length, then `headers`. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}
