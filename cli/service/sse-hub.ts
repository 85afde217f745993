import type { ServerResponse } from 'node:http';
import type { Committed } from '../../kernel/index.js';

/** Default bound on what one stream may have queued in this process before it is dropped (1 MiB). */
export const DEFAULT_MAX_BUFFERED_BYTES = 1 << 20;

export interface SseHubOptions {
  /**
   * Bytes a stream may have waiting in this process (`res.writableLength`: written, not yet taken
   * by the socket) before it is dropped with a `dropped` event (default 1 MiB).
   */
  maxBufferedBytes?: number;
  /** Interval of the keep-alive comment (default 15 s). */
  heartbeatMs?: number;
  /** How long a dropped stream may take to read its last bytes before its connection is cut (default 30 s). */
  dropGraceMs?: number;
}

/** How a stream starts: which Task, and from which position. */
export interface StreamStart {
  /** Only this Task's commits; its events' ids are its revisions. */
  taskId?: string;
  /** With `taskId`: the revision the client holds; the commits after it are replayed from `replay` first. */
  after?: number;
  /** Reads the Task's commits after a revision from the store; called once the stream hears live commits. */
  replay?: (after: number) => Promise<Committed[]>;
  /** Without `taskId`: the id a reconnecting client last received; it is answered with a `reset` event. */
  resumeFrom?: string;
}

interface Client {
  res: ServerResponse;
  taskId: string | undefined;
  /** Per-Task: the highest revision sent (or held by the client); commits at or below it are not sent again. */
  last: number;
  /** The id of the last event the client has (written to its socket, or given as its position). */
  lastId: string | null;
  /** Commits heard while the replay is read and written; null once the stream is live. */
  pending: Committed[] | null;
  pendingBytes: number;
}

const HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-store',
  connection: 'keep-alive',
};

/**
 * Server-Sent Events of commits: every durable transition is written to each open stream as
 * `event: commit` with the `Committed` record as data (optionally filtered to one Task).
 *
 * Ids are durable positions: on a per-Task stream the Task's revision, so a client that
 * reconnects with it is sent exactly the commits it missed, read from the store, then the live
 * ones, without a duplicate or a gap at the seam (the stream hears live commits before the store
 * is read, holds them, and sends those past what the replay sent). On the all-Tasks stream the id
 * is `<taskId>:<revision>`: no store orders commits across Tasks, so a reconnect there is told
 * so by a `reset` event. A stream whose client does not read is not buffered without bound:
 * past `maxBufferedBytes` it ends with `event: dropped` naming the last id it was sent.
 */
export class SseHub {
  private readonly clients = new Set<Client>();
  private readonly heartbeat: NodeJS.Timeout;
  private readonly maxBufferedBytes: number;
  private readonly dropGraceMs: number;

  constructor(options: SseHubOptions = {}) {
    this.maxBufferedBytes = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
    this.dropGraceMs = options.dropGraceMs ?? 30_000;
    // A comment line now and then keeps idle proxies and browsers from closing the stream.
    this.heartbeat = setInterval(() => {
      for (const client of this.clients) if (client.pending === null) this.write(client, ': keep-alive\n\n');
    }, options.heartbeatMs ?? 15_000);
    this.heartbeat.unref();
  }

  /**
   * Opens a stream on `res`. With `after` and `replay`, the missed commits are read before the
   * headers are written: a failing read rejects (the caller answers the error) and nothing is
   * sent. Resolves once the stream is live (or closed).
   */
  async open(res: ServerResponse, start: StreamStart = {}): Promise<void> {
    const replaying = start.taskId !== undefined && start.after !== undefined && start.replay !== undefined;
    const client: Client = {
      res,
      taskId: start.taskId,
      last: start.after ?? 0,
      lastId: start.after !== undefined ? String(start.after) : null,
      pending: replaying ? [] : null,
      pendingBytes: 0,
    };
    this.clients.add(client);
    res.on('close', () => this.clients.delete(client));
    let missed: Committed[] = [];
    if (replaying) {
      try {
        missed = await start.replay!(client.last);
      } catch (error) {
        this.clients.delete(client);
        throw error;
      }
    }
    if (!this.clients.has(client)) return;
    if (!res.headersSent) res.writeHead(200, HEADERS);
    res.write(`retry: 1000\n: connected\n\n`);
    if (start.taskId === undefined && start.resumeFrom !== undefined)
      res.write(
        `event: reset\ndata: ${JSON.stringify({ reason: 'not_resumable', lastEventId: start.resumeFrom })}\n\n`,
      );
    if (!replaying) return;
    // The replay is written at the pace the client reads it; live commits wait in `pending`.
    for (const committed of missed) if (!(await this.sendPaced(client, committed))) return;
    while (client.pending!.length > 0) {
      const committed = client.pending!.shift()!;
      client.pendingBytes -= frameOf(client, committed).length;
      if (!(await this.sendPaced(client, committed))) return;
    }
    client.pending = null;
  }

  publish(committed: Committed): void {
    for (const client of this.clients) {
      if (client.taskId !== undefined && client.taskId !== committed.taskId) continue;
      if (client.pending === null) {
        this.send(client, committed);
        continue;
      }
      if (committed.revision <= client.last) continue;
      client.pending.push(committed);
      client.pendingBytes += frameOf(client, committed).length;
      if (client.pendingBytes > this.maxBufferedBytes) this.drop(client);
    }
  }

  /** Whether a stream open now hears commits of `taskId` (it follows that Task, or every Task). */
  follows(taskId: string): boolean {
    for (const client of this.clients) if (client.taskId === undefined || client.taskId === taskId) return true;
    return false;
  }

  get size(): number {
    return this.clients.size;
  }

  /** Ends every stream (draining): clients see the stream close and may reconnect elsewhere. */
  close(): void {
    clearInterval(this.heartbeat);
    for (const client of this.clients) client.res.end();
    this.clients.clear();
  }

  /** Writes a live commit, or drops the client when what it has not read yet is past the bound. */
  private send(client: Client, committed: Committed): void {
    if (client.taskId !== undefined && committed.revision <= client.last) return;
    if (client.res.writableLength > this.maxBufferedBytes) return this.drop(client);
    client.res.write(frameOf(client, committed));
    this.sent(client, committed);
  }

  /** Writes a replayed or held commit and waits for the socket to take it when it is behind; false once the stream is gone. */
  private async sendPaced(client: Client, committed: Committed): Promise<boolean> {
    if (!this.clients.has(client)) return false;
    if (committed.revision <= client.last) return true;
    const { res } = client;
    const flowing = res.write(frameOf(client, committed));
    this.sent(client, committed);
    if (!flowing)
      await new Promise<void>((resolve) => {
        const done = () => (res.off('drain', done), res.off('close', done), resolve());
        res.on('drain', done);
        res.on('close', done);
      });
    return this.clients.has(client);
  }

  private sent(client: Client, committed: Committed): void {
    client.last = Math.max(client.last, committed.revision);
    client.lastId = idOf(client, committed);
  }

  private write(client: Client, text: string): void {
    if (client.res.writableLength > this.maxBufferedBytes) return this.drop(client);
    client.res.write(text);
  }

  /** Ends a stream that fell behind with a last event naming the last id it was sent, so it can resume from there. */
  private drop(client: Client): void {
    const { res } = client;
    this.clients.delete(client);
    if (!res.headersSent) res.writeHead(200, HEADERS);
    const reason = {
      reason: 'slow_consumer',
      lastEventId: client.lastId,
      maxBufferedBytes: this.maxBufferedBytes,
    };
    res.end(`event: dropped\ndata: ${JSON.stringify(reason)}\n\n`);
    // A client that never reads again must not hold its connection (and what is queued on it).
    const cut = setTimeout(() => res.destroy(), this.dropGraceMs);
    cut.unref();
    res.once('close', () => clearTimeout(cut));
  }
}

function idOf(client: Client, committed: Committed): string {
  return client.taskId !== undefined ? String(committed.revision) : `${committed.taskId}:${committed.revision}`;
}

function frameOf(client: Client, committed: Committed): string {
  return `id: ${idOf(client, committed)}\nevent: commit\ndata: ${JSON.stringify(committed)}\n\n`;
}
