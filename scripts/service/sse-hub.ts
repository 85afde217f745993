import type { ServerResponse } from 'node:http';
import type { Committed } from '../../actors/task-actor.js';

/**
 * Server-Sent Events of commits: every durable transition is written to each open stream as
 * `event: commit` with the `Committed` record as data (optionally filtered to one Task). A
 * client that falls behind is not waited for: Node buffers, and a closed stream is dropped.
 */
export class SseHub {
  private readonly clients = new Map<ServerResponse, string | undefined>();
  private seq = 0;
  private readonly heartbeat: NodeJS.Timeout;

  constructor() {
    // A comment line now and then keeps idle proxies and browsers from closing the stream.
    this.heartbeat = setInterval(() => this.write(': keep-alive\n\n'), 15_000);
    this.heartbeat.unref();
  }

  /** Opens a stream on `res`; `taskId` limits it to one Task's commits. */
  open(res: ServerResponse, taskId?: string): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    });
    res.write(`retry: 1000\n: connected\n\n`);
    this.clients.set(res, taskId);
    res.on('close', () => this.clients.delete(res));
  }

  publish(committed: Committed): void {
    const frame = `id: ${++this.seq}\nevent: commit\ndata: ${JSON.stringify(committed)}\n\n`;
    for (const [res, taskId] of this.clients) if (taskId === undefined || taskId === committed.taskId) res.write(frame);
  }

  get size(): number {
    return this.clients.size;
  }

  /** Ends every stream (draining): clients see the stream close and may reconnect elsewhere. */
  close(): void {
    clearInterval(this.heartbeat);
    for (const res of this.clients.keys()) res.end();
    this.clients.clear();
  }

  private write(text: string): void {
    for (const res of this.clients.keys()) res.write(text);
  }
}
