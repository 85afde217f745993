import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { postgresPart, startPostgres, type PostgresServer } from './postgres.js';
import { startProxy } from './tcp-proxy.js';

/** What a socket has received so far, and a promise for when it has received at least `text`. */
function collect(socket: Socket) {
  let text = '';
  let waiter: { length: number; resolve(): void } | undefined;
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    text += chunk;
    if (waiter && text.length >= waiter.length) waiter.resolve();
  });
  return {
    get text() {
      return text;
    },
    until(length: number): Promise<void> {
      if (text.length >= length) return Promise.resolve();
      return new Promise((resolve) => (waiter = { length, resolve }));
    },
  };
}

async function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  assert.ok(address !== null && typeof address !== 'string');
  return address.port;
}

async function dial(port: number): Promise<Socket> {
  const socket = connect({ port, host: '127.0.0.1' });
  await once(socket, 'connect');
  return socket;
}

describe('startProxy: a loopback TCP proxy a test can partition', () => {
  it('forwards both ways, drops both ways while blackholed, forwards again once healed', async () => {
    // The target answers every chunk it gets with `<chunk>`, and the test can make it speak on its own.
    const target = createServer((socket) => socket.on('data', (chunk) => socket.write(`<${chunk.toString()}>`)));
    const accepted = once(target, 'connection') as Promise<[Socket]>;
    const proxy = await startProxy(await listen(target));
    const client = await dial(proxy.port);
    const [far] = await accepted;
    const got = collect(client);
    try {
      client.write('hello');
      await got.until('<hello>'.length);

      proxy.blackhole();
      client.write('lost');
      await proxy.whenDropped('lost'.length);
      far.write('unheard');
      await proxy.whenDropped('lost'.length + 'unheard'.length);
      assert.equal(got.text, '<hello>', 'nothing crossed the partition either way');
      assert.equal(client.destroyed || far.destroyed, false, 'the partition closes no connection');

      proxy.heal();
      client.write('again');
      await got.until('<hello><again>'.length);
      assert.equal(got.text, '<hello><again>');
      assert.equal(proxy.dropped, 'lost'.length + 'unheard'.length);

      const closed = Promise.all([once(client, 'close'), once(far, 'close')]);
      proxy.cutAll();
      await closed;
    } finally {
      client.destroy();
      await proxy.close();
      target.close();
    }
  });

  it('reset() ends every open connection with a TCP RST on both sides, and forwards new ones', async () => {
    const target = createServer((socket) => socket.on('data', (chunk) => socket.write(`<${chunk.toString()}>`)));
    const accepted = once(target, 'connection') as Promise<[Socket]>;
    const proxy = await startProxy(await listen(target));
    const client = await dial(proxy.port);
    const [far] = await accepted;
    const before = collect(client);
    try {
      // Bytes both ways first: both of the proxy's sockets are connected, which a reset needs.
      client.write('ping');
      await before.until('<ping>'.length);
      const clientError = once(client, 'error') as Promise<[NodeJS.ErrnoException]>;
      const farError = once(far, 'error') as Promise<[NodeJS.ErrnoException]>;
      assert.equal(proxy.reset(), 1);
      assert.equal((await clientError)[0].code, 'ECONNRESET');
      assert.equal((await farError)[0].code, 'ECONNRESET');

      const again = await dial(proxy.port);
      const got = collect(again);
      again.write('after');
      await got.until('<after>'.length);
      assert.equal(got.text, '<after>');
      again.destroy();
    } finally {
      client.destroy();
      await proxy.close();
      target.close();
    }
  });

  it('closes the client when the target refuses, and refuses connections once closed', async () => {
    const gone = createServer();
    const port = await listen(gone);
    gone.close();
    await once(gone, 'close');
    const proxy = await startProxy(port);
    const client = await dial(proxy.port);
    client.on('error', () => {});
    await once(client, 'close');
    await proxy.close();
    const refused = connect({ port: proxy.port, host: '127.0.0.1' });
    const [err] = (await once(refused, 'error')) as [NodeJS.ErrnoException];
    assert.equal(err.code, 'ECONNREFUSED');
  });
});

const PG = postgresPart();

describe('startProxy in front of PostgreSQL', { skip: PG.skip, timeout: 180_000 }, () => {
  let server: PostgresServer;
  before(async () => {
    PG.need();
    server = await startPostgres();
  });
  after(() => server?.stop());

  it("a query across a blackhole fails by pg's query_timeout, a new connection by its connection timeout; after heal() a new connection works", async () => {
    const proxy = await startProxy(server.port);
    const through = (options: pg.ClientConfig = {}) => {
      const url = new URL(server.url);
      url.port = String(proxy.port);
      const client = new pg.Client({ connectionString: url.toString(), ...options });
      client.on('error', () => {}); // the partitioned clients lose their connection at proxy.close()
      return client;
    };
    const partitioned = through();
    const clients = [partitioned];
    try {
      await partitioned.connect();
      assert.deepEqual((await partitioned.query('SELECT 1 AS one')).rows, [{ one: 1 }]);

      proxy.blackhole();
      // pg takes query_timeout per query too; @types/pg names it only in the client's config.
      const timed: pg.QueryConfig & { query_timeout: number } = { text: 'SELECT 2', query_timeout: 500 };
      await assert.rejects(partitioned.query(timed), /Query read timeout/);
      const late = through({ connectionTimeoutMillis: 500 });
      clients.push(late);
      await assert.rejects(late.connect(), /timeout/i);

      proxy.heal();
      const fresh = through();
      clients.push(fresh);
      await fresh.connect();
      assert.deepEqual((await fresh.query('SELECT 3 AS three')).rows, [{ three: 3 }]);
    } finally {
      // Ending a client whose connection is partitioned waits for its socket to close: proxy.close() closes it.
      const ended = Promise.allSettled(clients.map((client) => client.end()));
      await proxy.close();
      await ended;
    }
  });

  it('cutAll() ends a connection the client then reports as terminated', async () => {
    const proxy = await startProxy(server.port);
    const url = new URL(server.url);
    url.port = String(proxy.port);
    const client = new pg.Client({ connectionString: url.toString() });
    try {
      await client.connect();
      const lost = once(client, 'error') as Promise<[Error]>;
      proxy.cutAll();
      const [err] = await lost;
      assert.match(err.message, /terminated/i);
      await assert.rejects(client.query('SELECT 1'));
    } finally {
      await client.end().catch(() => {});
      await proxy.close();
    }
  });
});
