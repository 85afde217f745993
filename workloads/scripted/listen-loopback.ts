import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on an ephemeral 127.0.0.1 port (nothing else is reachable); resolves with the port, rejects on a listen error. */
export async function listenLoopback(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return (server.address() as AddressInfo).port;
}
