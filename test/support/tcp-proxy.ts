import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';

/** A loopback TCP proxy in front of one target, whose network a test can partition. */
export interface TcpProxy {
  /** Where clients connect (127.0.0.1). */
  port: number;
  /**
   * From now on the bytes of every connection, both ways, are silently dropped, and a side that
   * closes is not passed on to the other: a half-open partition, no RST and no FIN. New connections
   * are accepted and partitioned too.
   */
  blackhole(): void;
  /** Bytes flow again (those dropped stay lost); a connection one side of which closed during the partition is now closed on the other. */
  heal(): void;
  /** Destroys every connection, both sides. */
  cutAll(): void;
  /**
   * Resets every connection open now, both sides, with a TCP RST (`socket.resetAndDestroy()`), as
   * a restarting proxy or a middlebox dropping its state does; returns how many were reset. New
   * connections are forwarded as before.
   */
  reset(): number;
  /** Stops accepting and destroys every connection. */
  close(): Promise<void>;
  /** Bytes dropped so far. */
  readonly dropped: number;
  /** Resolves once at least `bytes` bytes in all have been dropped. */
  whenDropped(bytes: number): Promise<void>;
}

interface Link {
  sides: [Socket, Socket];
  /** A side closed while partitioned: the other is closed at heal(). */
  severed: boolean;
}

export async function startProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const links = new Set<Link>();
  let partitioned = false;
  let dropped = 0;
  const waiters: Array<{ bytes: number; resolve(): void }> = [];

  const drop = (bytes: number) => {
    dropped += bytes;
    for (const waiter of waiters.filter((w) => w.bytes <= dropped)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };

  const server = createServer({ allowHalfOpen: true }, (client) => {
    const upstream = connect({ port: targetPort, host: targetHost, allowHalfOpen: true });
    const link: Link = { sides: [client, upstream], severed: false };
    links.add(link);
    const forward = (from: Socket, to: Socket) => {
      from.on('data', (chunk: Buffer) => {
        if (partitioned) return drop(chunk.length);
        if (to.destroyed) return;
        if (!to.write(chunk)) {
          from.pause();
          to.once('drain', () => from.resume());
        }
      });
      from.on('end', () => {
        if (partitioned) link.severed = true;
        else to.end();
      });
      from.on('close', (hadError) => {
        if (partitioned) link.severed = true;
        else if (hadError) to.destroy();
        else to.end();
        if (client.destroyed && upstream.destroyed) links.delete(link);
      });
      // A reset or a refused upstream shows as 'close' with hadError, handled above.
      from.on('error', () => {});
    };
    forward(client, upstream);
    forward(upstream, client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy got no TCP port');

  const cutAll = () => {
    for (const link of links) for (const side of link.sides) side.destroy();
    links.clear();
  };
  const reset = () => {
    const count = links.size;
    for (const link of links)
      for (const side of link.sides) {
        // A socket already closed or not yet connected has no connection to reset.
        if (side.destroyed) continue;
        if (side.connecting) side.destroy();
        else side.resetAndDestroy();
      }
    links.clear();
    return count;
  };
  return {
    port: address.port,
    reset,
    blackhole() {
      partitioned = true;
    },
    heal() {
      partitioned = false;
      for (const link of links) {
        if (!link.severed) continue;
        for (const side of link.sides) side.destroy();
        links.delete(link);
      }
    },
    cutAll,
    async close() {
      const closed = once(server, 'close');
      server.close();
      cutAll();
      await closed;
    },
    get dropped() {
      return dropped;
    },
    whenDropped(bytes) {
      if (dropped >= bytes) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ bytes, resolve }));
    },
  };
}
