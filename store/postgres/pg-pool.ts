import pg from 'pg';
import { storeErrorOf } from './stored.js';

/** How a Host's one pool of connections to the shared history is opened. */
export interface PoolOptions {
  /** `postgres://…` */
  url: string;
  /** Connections in the pool (appends of different Tasks run in parallel, one per connection). */
  poolSize?: number;
  /** Client-side limit on one statement: a blackholed connection fails instead of hanging. */
  statementTimeoutMs?: number;
  /** Client-side limit on opening a connection (default the statement timeout, else 10 s). */
  connectTimeoutMs?: number;
}

/** The pool every part of a `PgHistory` (schema, leases, jobs, appends, reads, watch) shares. */
export function openPool(options: PoolOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 8,
    ...(options.statementTimeoutMs ? { query_timeout: options.statementTimeoutMs } : {}),
    connectionTimeoutMillis: options.connectTimeoutMs ?? options.statementTimeoutMs ?? 10_000,
  });
  handleConnectionErrors(pool);
  return pool;
}

/** One statement on the pool; a database failure becomes `storage_failed` (stored.ts). */
export async function queryOrFail(pool: pg.Pool, text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  try {
    return await pool.query(text, values);
  } catch (error) {
    throw storeErrorOf(error, {});
  }
}

/**
 * Runs `work` on one pooled connection. A connection whose work failed is closed, not pooled
 * again: after a statement timeout it may wait forever for an answer a partition dropped (every
 * later statement queued behind it), or sit inside the transaction it began; closing it ends
 * that transaction on the server too.
 */
export async function withClient<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let result: T;
  try {
    result = await work(client);
  } catch (error) {
    client.release(error instanceof Error ? error : true);
    throw error;
  }
  client.release();
  return result;
}

/**
 * Keeps a connection's failure (a reset, a proxy closing, the server restarting) from crashing
 * the process. pg emits 'error' on a Client whose socket fails; the pool listens only while the
 * client is idle, and `pool.query` only during its own statement, so a client checked out with
 * `connect()` (a transaction, a poll) had no listener between statements and Node threw the
 * event (`Emitted 'error' event on Client instance`). The statements in flight are rejected by
 * pg itself; the caller releases the client with its error and the pool discards it.
 */
export function handleConnectionErrors(pool: pg.Pool): void {
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
  });
}

/** A connection string without its password, for messages. */
export function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}
