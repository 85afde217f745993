import { after } from 'node:test';

/**
 * `start` (a world's `startLedger`, `startProvider`, `startWebapp`, with a test's defaults), and
 * every server it started stopped after the file's tests: first `release` on each (a provider's
 * held answers), then `stop`.
 */
export function stoppedAfter<A extends unknown[], P extends { stop(): Promise<unknown> }>(
  start: (...args: A) => Promise<P>,
  release?: (server: P) => Promise<unknown>,
): (...args: A) => Promise<P> {
  const started: P[] = [];
  after(async () => {
    if (release) await Promise.all(started.map((server) => release(server).catch(() => undefined)));
    await Promise.all(started.map((server) => server.stop()));
  });
  return async (...args) => {
    const server = await start(...args);
    started.push(server);
    return server;
  };
}
