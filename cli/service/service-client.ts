import { request } from 'node:http';
import type { ServiceFile } from './service-file.js';

export interface ServiceResponse {
  status: number;
  body: unknown;
}

/**
 * A minimal client of the control API, over the unix socket or loopback TCP named in
 * `service.json`, carrying the token that file names (else `ORDIVON_TOKEN`). Rejects (with the socket error) only when the service cannot be reached;
 * every HTTP answer, refusals included, resolves.
 */
export function callService(
  info: ServiceFile,
  method: string,
  path: string,
  body?: unknown,
  token = info.token ?? process.env.ORDIVON_TOKEN,
): Promise<ServiceResponse> {
  const url = new URL(path, info.url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        method,
        agent: false,
        ...(info.socket ? { socketPath: info.socket } : { hostname: url.hostname, port: url.port }),
        path: `${url.pathname}${url.search}`,
        headers: {
          host: url.host,
          ...(payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            /* not JSON: returned as text */
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
