import type { IncomingMessage, ServerResponse } from 'node:http';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { serverMain } from '../../shared/server-main.js';
import { Faults } from './provider-faults.js';
import { sendJson } from '../../shared/http-boundary.js';
import { listener, matchValue, parse, readJson, refuse, storage } from './provider-http.js';
import { openProviderDb, RECORDS_FILE, sha256Of, type ProviderDb } from './provider-db.js';
import type { ProviderCode } from './provider-error.js';
import {
  FaultRequest,
  OperationBody,
  OperationHeaders,
  PathId,
  PathKey,
  PathName,
  TargetBody,
  TargetHeaders,
  type Discovery,
  type FaultState,
  type Operation,
  type ProviderRecord,
  type Receipt,
} from './provider-schema.js';

/**
 * World W1's provider: `node server.js --dir DIR --identity KEY [--port N] [--retention-ms N]
 * [--settle-ms N]`. One process, one records file (`DIR/provider.db`), a JSON API on 127.0.0.1;
 * prints `{"url":…,"identity":…}` on stdout once it listens. Exit 2 on a bad command line, 1 if
 * the file or the listen fails, 0 on SIGTERM or SIGINT (the database closed first).
 *
 * Failure semantics of the three operations: the perform is committed and synced before anything
 * is sent. If the answer is then lost (a fault switch, a dead process, a dropped connection), the
 * record is in the file; only `orders` (by key, within the window) and `transfers` (by the id the
 * 202 carried) can be looked up. Every refusal is answered before anything is committed.
 */

const DAY_MS = 24 * 60 * 60 * 1000;

const Count = (min: number) =>
  z.string().regex(/^\d+$/, 'a whole number').transform(Number).pipe(z.number().int().min(min));

const Args = z.strictObject({
  dir: z.string().min(1),
  identity: z.string().min(1).max(200),
  port: Count(0).pipe(z.number().max(65535)).default(0),
  'retention-ms': Count(1).default(DAY_MS),
  'settle-ms': Count(0).default(0),
});
type Args = z.infer<typeof Args>;

const OBJECT: Record<Operation, Receipt['object']> = { orders: 'order', transfers: 'transfer', messages: 'message' };

function handler(db: ProviderDb, faults: Faults, args: Args) {
  let offset = db.clockOffset();
  const now = () => Date.now() + offset;
  const identity = () => sha256Of(faults.identityKey ?? args.identity);

  const receiptOf = (record: ProviderRecord): Receipt => {
    const settled = record.operation !== 'transfers' || now() >= Date.parse(record.performedAt) + args['settle-ms'];
    return {
      id: record.id,
      object: OBJECT[record.operation],
      status: settled ? 'succeeded' : 'pending',
      reference: record.reference,
      target: record.target,
      targetVersion: record.targetVersion,
      inputDigest: record.inputDigest,
      createdAt: record.performedAt,
    };
  };

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
    // One request per connection: a client never sends on a socket this server already closed,
    // so "refused" (nothing sent) stays distinguishable from "lost" (sent, no answer).
    sendJson(res, status, body, { 'provider-identity': identity(), connection: 'close', ...headers });

  const capabilities = (): Discovery => ({
    identity: identity(),
    capabilities: {
      orders: { idempotency: 'key', lookup: true, lookupWindowMs: args['retention-ms'] },
      transfers: { idempotency: 'provider-id', lookup: true, lookupWindowMs: null },
      messages: { idempotency: 'none', lookup: false, lookupWindowMs: null },
    },
  });

  const faultState = (): FaultState => ({
    drop: faults.drop,
    delay: faults.delay,
    identity: identity(),
    identityChanged: faults.identityKey !== null,
    now: new Date(now()).toISOString(),
    held: faults.held.size,
  });

  const targetOr404 = (name: string) => {
    const target = storage(() => db.target(name));
    if (target === undefined) throw refuse(404, 'provider_target_not_found', `no target ${name}`, 'target');
    return target;
  };

  /** The answer of a committed perform, through the fault switches. */
  const answerCommitted = async (
    req: IncomingMessage,
    res: ServerResponse,
    operation: Operation,
    answer: () => void,
  ): Promise<void> => {
    const { drop, delayMs } = faults.takeFor(operation);
    if (drop) {
      // Committed, then the connection goes without an answer: the client cannot tell this from a
      // request that never arrived.
      req.socket.destroy();
      return;
    }
    if (delayMs !== undefined)
      await new Promise<void>((resolve) => {
        const go = () => {
          clearTimeout(timer);
          faults.held.delete(go);
          resolve();
        };
        const timer = setTimeout(go, delayMs);
        faults.held.add(go);
      });
    if (!req.socket.destroyed) answer();
  };

  const perform = async (req: IncomingMessage, res: ServerResponse, operation: Operation) => {
    const headers = parse(OperationHeaders, req.headers, 'headers');
    const { text, json } = await readJson(req);
    const body = parse(OperationBody, json);
    const bodyDigest = sha256Of(text);
    const key = operation === 'orders' ? headers['idempotency-key'] : undefined;
    if (key !== undefined) {
      const kept = storage(() => db.idempotency(key));
      if (kept !== undefined && kept.stored_at + args['retention-ms'] > now()) {
        if (kept.body_digest !== bodyDigest)
          throw refuse(
            422,
            'provider_idempotency_key_reused',
            `key ${key} was used for another body`,
            'headers.idempotency-key',
          );
        return send(res, kept.status, JSON.parse(kept.response), { 'idempotent-replayed': 'true' });
      }
    }
    const target = targetOr404(body.target);
    const ifMatch = headers['if-match'];
    if (ifMatch !== undefined && matchValue(ifMatch) !== target.version)
      throw refuse(
        412,
        'provider_target_changed',
        `target ${target.name} is at ${target.version}, not ${ifMatch}`,
        'headers.if-match',
      );
    const status = operation === 'transfers' ? 202 : 201;
    const committed = storage(() =>
      db.perform({
        operation,
        reference: body.reference,
        idempotencyKey: key,
        target: target.name,
        targetVersion: target.version,
        inputDigest: headers['input-digest'],
        bodyDigest,
        now: now(),
        // A 202 says accepted, not done: the transfer is pending however soon it settles.
        answer: (record) => ({
          status,
          body: { ...receiptOf(record), ...(operation === 'transfers' ? { status: 'pending' } : {}) },
        }),
      }),
    );
    const extra: Record<string, string> =
      operation === 'transfers' ? { location: `/v1/transfers/${committed.record.id}` } : {};
    await answerCommitted(req, res, operation, () => send(res, committed.status, committed.body, extra));
  };

  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    const segment = (pattern: RegExp) => {
      const match = pattern.exec(url.pathname);
      if (match === null) return undefined;
      try {
        return decodeURIComponent(match[1]!);
      } catch {
        throw refuse(400, 'provider_invalid_request', `${match[1]} is not URL-encoded text`, 'path');
      }
    };
    const targetName = segment(/^\/v1\/targets\/([^/]+)$/);
    if (targetName !== undefined && (method === 'GET' || method === 'PUT')) {
      const { name } = parse(PathName, { name: targetName }, 'path');
      if (method === 'GET') {
        const target = targetOr404(name);
        return send(res, 200, target, { etag: `"${target.version}"` });
      }
      const headers = parse(TargetHeaders, req.headers, 'headers');
      const { content } = parse(TargetBody, (await readJson(req)).json);
      const current = storage(() => db.target(name));
      const ifMatch = headers['if-match'];
      if (ifMatch !== undefined && (current === undefined || matchValue(ifMatch) !== current.version))
        throw refuse(
          412,
          'provider_target_changed',
          `target ${name} is at ${current?.version ?? 'nothing'}, not ${ifMatch}`,
          'headers.if-match',
        );
      const target = storage(() => db.putTarget(name, content));
      return send(res, 200, target, { etag: `"${target.version}"` });
    }
    const key = segment(/^\/v1\/idempotency\/([^/]+)$/);
    if (key !== undefined && method === 'GET') {
      parse(PathKey, { key }, 'path');
      const kept = storage(() => db.idempotency(key));
      if (kept === undefined) throw refuse(404, 'provider_not_found', `no receipt under key ${key}`, 'path.key');
      if (kept.stored_at + args['retention-ms'] <= now())
        throw refuse(410, 'provider_lookup_expired', `key ${key}'s retention window passed`, 'path.key');
      const record = storage(() => db.bySeq(kept.seq));
      if (record === undefined) throw refuse(500, 'provider_storage_failed', `key ${key} names no record`);
      return send(res, 200, receiptOf(record));
    }
    const id = segment(/^\/v1\/transfers\/([^/]+)$/);
    if (id !== undefined && method === 'GET') {
      parse(PathId, { id }, 'path');
      const record = storage(() => db.byId(id));
      if (record === undefined || record.operation !== 'transfers')
        throw refuse(404, 'provider_not_found', `no transfer ${id}`, 'path.id');
      return send(res, 200, receiptOf(record));
    }
    switch (`${method} ${url.pathname}`) {
      case 'GET /.well-known/provider':
        return send(res, 200, capabilities());
      case 'POST /v1/orders':
        return perform(req, res, 'orders');
      case 'POST /v1/transfers':
        return perform(req, res, 'transfers');
      case 'POST /v1/messages':
        return perform(req, res, 'messages');
      case 'GET /_records':
        return send(res, 200, { records: storage(() => db.records()) });
      case 'GET /_faults':
        return send(res, 200, faultState());
      case 'POST /_faults/release':
        faults.release();
        return send(res, 200, faultState());
      case 'POST /_faults': {
        const request = parse(FaultRequest, (await readJson(req)).json);
        // Checked before any switch changes: a refused request changes nothing.
        const moved = request.moveTarget === undefined ? undefined : targetOr404(request.moveTarget);
        if (request.drop !== undefined)
          faults.drop =
            request.drop === null
              ? null
              : { operations: request.drop.operations, remaining: request.drop.times ?? null };
        if (request.delay !== undefined)
          faults.delay =
            request.delay === null
              ? null
              : { operations: request.delay.operations, ms: request.delay.ms, remaining: request.delay.times ?? null };
        if (request.identity !== undefined) faults.identityKey = request.identity;
        if (request.advanceClockMs !== undefined && request.advanceClockMs > 0) {
          const next = offset + request.advanceClockMs;
          storage(() => db.setClockOffset(next));
          offset = next;
        }
        if (moved !== undefined)
          storage(() => db.putTarget(moved.name, { movedAt: new Date(now()).toISOString(), was: moved.content }));
        return send(res, 200, faultState());
      }
      default:
        throw refuse(404, 'provider_route_not_found', `no route ${method} ${url.pathname}`);
    }
  };
  return listener(route, (_, res, refusal) => send(res, refusal.status, refusal.answer));
}

serverMain({
  args: Args,
  codes: { usage: 'provider_usage', startFailed: 'provider_start_failed' } satisfies Record<string, ProviderCode>,
  records: (args) => join(args.dir, RECORDS_FILE),
  open: (args) => {
    mkdirSync(args.dir, { recursive: true });
    return { db: openProviderDb(join(args.dir, RECORDS_FILE)), faults: new Faults() };
  },
  handler: (args, { db, faults }) => handler(db, faults, args),
  line: (args, port) => ({ url: `http://127.0.0.1:${port}`, identity: sha256Of(args.identity) }),
  // Held answers are let go (their sockets close unanswered), then the records close.
  close: ({ db, faults }) => {
    faults.release();
    db.close();
  },
  port: (args) => args.port,
});
