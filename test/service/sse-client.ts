import { request, type IncomingMessage } from 'node:http';
import { until } from '../support/until.js';

/** One SSE frame as the client read it (comment-only frames are left out). */
export interface SseFrame {
  id?: string;
  event?: string;
  data?: any;
}

export interface SseClient {
  /** Resolves with the response once its headers arrived (status, headers). */
  response: Promise<IncomingMessage>;
  /** Every frame read so far, in order. */
  frames: SseFrame[];
  /** The `commit` frames read so far. */
  commits(): SseFrame[];
  /** Resolves once `count` commit frames were read (polling with a deadline: a hang detector, not a timing). */
  commitsReach(count: number): Promise<SseFrame[]>;
  /** True once the server ended the stream. */
  ended(): boolean;
  /** Stops reading from the socket (its buffers fill) / starts again. */
  pause(): void;
  resume(): void;
  close(): void;
}

/** Opens `path` (e.g. `/events?taskId=t`) as an SSE stream over the unix socket or TCP of `target`. */
export function sse(
  target: { url: string; socket?: string },
  path: string,
  headers: Record<string, string> = {},
): SseClient {
  const url = new URL(path, target.url);
  const frames: SseFrame[] = [];
  let ended = false;
  let res: IncomingMessage | undefined;
  let paused = false;
  const req = request({
    method: 'GET',
    agent: false,
    ...(target.socket ? { socketPath: target.socket } : { hostname: url.hostname, port: url.port }),
    path: `${url.pathname}${url.search}`,
    headers,
  });
  const response = new Promise<IncomingMessage>((resolve, reject) => {
    req.once('response', (r) => {
      res = r;
      if (paused) r.pause();
      let buffer = '';
      r.setEncoding('utf8');
      r.on('data', (chunk: string) => {
        buffer += chunk;
        let at: number;
        while ((at = buffer.indexOf('\n\n')) >= 0) {
          const frame: SseFrame = {};
          for (const line of buffer.slice(0, at).split('\n')) {
            if (line.startsWith('id: ')) frame.id = line.slice(4);
            else if (line.startsWith('event: ')) frame.event = line.slice(7);
            else if (line.startsWith('data: ')) frame.data = JSON.parse(line.slice(6));
          }
          buffer = buffer.slice(at + 2);
          if (frame.event !== undefined || frame.id !== undefined) frames.push(frame);
        }
      });
      r.on('end', () => (ended = true));
      r.on('close', () => (ended = true));
      resolve(r);
    });
    req.once('error', reject);
  });
  req.end();
  const commits = () => frames.filter((f) => f.event === 'commit');
  return {
    response,
    frames,
    commits,
    commitsReach: (count) =>
      until(`${count} commits on ${path}`, 20_000, async () => (commits().length >= count ? commits() : undefined)),
    ended: () => ended,
    pause() {
      paused = true;
      res?.pause();
    },
    resume() {
      paused = false;
      res?.resume();
    },
    close: () => req.destroy(),
  };
}
