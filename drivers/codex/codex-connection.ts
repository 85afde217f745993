import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { JSONRPC_INTERNAL_ERROR } from './errors.js';
import { RpcError, ServerNotification, ServerRequest, ServerResponse, type RequestId } from './codex-wire.js';

/** Outcome of one of our requests. `closed`: the server's output ended before it answered. */
export type RpcOutcome = { ok: true; result: unknown } | { ok: false; error: RpcError } | { ok: false; closed: true };

/** What we send back for a server request: exactly one of `result` or `error`. */
export type ServerRequestReply = { result: unknown } | { error: RpcError };

export type WireDirection = 'in' | 'out';

export interface CodexConnectionHandlers {
  onNotification(notification: ServerNotification): void;
  /** Must answer every request; a throw is answered with a JSON-RPC internal error. */
  onServerRequest(request: ServerRequest): ServerRequestReply;
  /** A line that could not be used: not JSON, no recognisable shape, or an answer to no request of ours. */
  onProtocolError(detail: string): void;
  /** Every line in both directions, before parsing (a tap for tests and debugging). */
  onWire?: ((direction: WireDirection, line: string) => void) | undefined;
}

function preview(line: string): string {
  return line.length > 120 ? `${line.slice(0, 120)}…` : line;
}

/**
 * The Codex app-server wire: one JSON object per line on stdio, JSON-RPC 2.0 shapes *without*
 * the `jsonrpc` member. Messages are classified by shape — `method`+`id` is a server request
 * (its own id space, so it may collide with ours), `method` alone a notification, `id` with
 * `result`/`error` a response to us. Bad lines are reported and skipped, never fatal here.
 */
export class CodexConnection {
  #nextId = 0;
  readonly #pending = new Map<RequestId, (outcome: RpcOutcome) => void>();
  readonly #stdin: Writable;
  readonly #handlers: CodexConnectionHandlers;
  /** Resolves when stdout has ended and every line has been handled. */
  readonly ended: Promise<void>;

  constructor(stdin: Writable, stdout: Readable, handlers: CodexConnectionHandlers) {
    this.#stdin = stdin;
    this.#handlers = handlers;
    stdin.on('error', () => {}); // EPIPE after the server died: the exit path reports it
    const lines = createInterface({ input: stdout, crlfDelay: Number.POSITIVE_INFINITY });
    lines.on('line', (line) => this.#receive(line));
    this.ended = new Promise<void>((resolve) => {
      lines.once('close', () => {
        for (const settle of this.#pending.values()) settle({ ok: false, closed: true });
        this.#pending.clear();
        resolve();
      });
    });
  }

  /** Sends a request; resolves with its result or error, or `closed` if the server's output ends first. Never rejects. */
  request(method: string, params: unknown): Promise<RpcOutcome> {
    const id = this.#nextId++;
    return new Promise<RpcOutcome>((resolve) => {
      this.#pending.set(id, resolve);
      if (!this.#send({ id, method, params })) {
        this.#pending.delete(id);
        resolve({ ok: false, closed: true });
      }
    });
  }

  /** Sends a notification (fire and forget). */
  notify(method: string, params?: unknown): void {
    this.#send(params === undefined ? { method } : { method, params });
  }

  /** Closes the server's stdin (end of input: the app-server then exits on its own). Idempotent. */
  closeInput(): void {
    if (!this.#stdin.writableEnded && !this.#stdin.destroyed) this.#stdin.end();
  }

  #send(message: Record<string, unknown>): boolean {
    if (this.#stdin.writableEnded || this.#stdin.destroyed) return false;
    const line = JSON.stringify(message);
    this.#tap('out', line);
    this.#stdin.write(`${line}\n`);
    return true;
  }

  #tap(direction: WireDirection, line: string): void {
    try {
      this.#handlers.onWire?.(direction, line);
    } catch {
      // an observer must never break the run
    }
  }

  #receive(raw: string): void {
    const line = raw.trim();
    if (line === '') return;
    this.#tap('in', line);
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      this.#handlers.onProtocolError(`malformed JSON line: ${preview(line)}`);
      return;
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      this.#handlers.onProtocolError(`not a JSON object: ${preview(line)}`);
      return;
    }
    if ('method' in message) {
      if ('id' in message) this.#serve(message, line);
      else this.#notice(message, line);
    } else if ('id' in message) {
      this.#settle(message, line);
    } else {
      this.#handlers.onProtocolError(`message with neither method nor id: ${preview(line)}`);
    }
  }

  #serve(message: object, line: string): void {
    const parsed = ServerRequest.safeParse(message);
    if (!parsed.success) {
      this.#handlers.onProtocolError(`invalid server request: ${preview(line)}`);
      return; // without a usable id there is nobody to answer
    }
    let reply: ServerRequestReply;
    try {
      reply = this.#handlers.onServerRequest(parsed.data);
    } catch (error) {
      reply = {
        error: {
          code: JSONRPC_INTERNAL_ERROR,
          message: `client failed to handle ${parsed.data.method}: ${String(error)}`,
        },
      };
    }
    this.#send({ id: parsed.data.id, ...reply });
  }

  #notice(message: object, line: string): void {
    const parsed = ServerNotification.safeParse(message);
    if (parsed.success) this.#handlers.onNotification(parsed.data);
    else this.#handlers.onProtocolError(`invalid notification: ${preview(line)}`);
  }

  #settle(message: object, line: string): void {
    const parsed = ServerResponse.safeParse(message);
    if (!parsed.success || !('result' in message || 'error' in message)) {
      this.#handlers.onProtocolError(`invalid response: ${preview(line)}`);
      return;
    }
    const settle = this.#pending.get(parsed.data.id);
    if (settle === undefined) {
      this.#handlers.onProtocolError(`response to no pending request: ${preview(line)}`);
      return;
    }
    this.#pending.delete(parsed.data.id);
    const failed = RpcError.safeParse('error' in parsed.data ? parsed.data.error : undefined);
    settle(failed.success ? { ok: false, error: failed.data } : { ok: true, result: parsed.data['result'] });
  }
}
