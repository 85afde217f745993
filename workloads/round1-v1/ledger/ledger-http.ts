import { request } from 'node:http';

/**
 * What one HTTP call to the ledger came to. The split the Host needs is between `refused` (no
 * connection was made, so the ledger never saw the request) and `lost` (a connection was made and
 * no complete answer came back, so the ledger may have acted on it).
 */
export type HttpOutcome =
  | { kind: 'answer'; status: number; /** the body as JSON, `undefined` when it is not JSON */ body: unknown }
  | { kind: 'refused'; message: string }
  | { kind: 'lost'; message: string };

/**
 * One JSON call; never rejects. Each call has a connection of its own (`agent: false`): on a kept-
 * alive socket the server may have closed, a request fails in a way that says nothing about
 * whether it was read, and "refused" could no longer be told apart from "lost".
 */
export function httpJson(base: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<HttpOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: HttpOutcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    let connected = false;
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      new URL(path, base),
      {
        method,
        agent: false,
        headers:
          text === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', (error) => settle({ kind: 'lost', message: `the answer broke off: ${error.message}` }));
        res.on('close', () => {
          if (!res.complete) return settle({ kind: 'lost', message: 'the answer broke off' });
          let parsed: unknown;
          try {
            parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            parsed = undefined;
          }
          settle({ kind: 'answer', status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('socket', (socket) => socket.once('connect', () => (connected = true)));
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (!connected && error.code === 'ECONNREFUSED') settle({ kind: 'refused', message: error.message });
      else settle({ kind: 'lost', message: `${error.code ?? 'error'}: ${error.message}` });
    });
    req.end(text);
  });
}
