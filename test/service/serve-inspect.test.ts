import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';
import { http, startServe } from './serve-child.js';

/**
 * A minimal WebSocket receiver on 127.0.0.1 standing in for the Stately inspector server:
 * it completes the handshake and decodes the client's masked text frames (RFC 6455 §5.2).
 */
function inspectorPeer(onMessage: (text: string) => void) {
  const server = createServer();
  server.on('upgrade', (req, socket) => {
    const accept = createHash('sha1')
      .update(`${req.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
      .digest('base64');
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
    );
    let buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        if (buffer.length < 2) return;
        let length = buffer[1]! & 0x7f;
        let offset = 2;
        if (length === 126) [length, offset] = [buffer.readUInt16BE(2), 4];
        else if (length === 127) [length, offset] = [Number(buffer.readBigUInt64BE(2)), 10];
        if (buffer.length < offset + 4 + length) return;
        const mask = buffer.subarray(offset, offset + 4);
        const payload = Buffer.from(buffer.subarray(offset + 4, offset + 4 + length).map((b, i) => b ^ mask[i % 4]!));
        if ((buffer[0]! & 0x0f) === 1) onMessage(payload.toString('utf8'));
        buffer = buffer.subarray(offset + 4 + length);
      }
    });
    socket.on('error', () => undefined);
  });
  return server;
}

describe('ordivon serve --inspect', { timeout: 60_000 }, () => {
  it('sends live Task actors to a Stately inspector over WebSocket', async () => {
    let sawTask!: () => void;
    const seen = new Promise<void>((resolve) => (sawTask = resolve));
    const messages: string[] = [];
    const peer = inspectorPeer((text) => {
      messages.push(text);
      if (text.includes('task:insp-1')) sawTask();
    });
    await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
    const url = `ws://127.0.0.1:${(peer.address() as AddressInfo).port}`;
    const serve = await startServe([
      '--state',
      join(tempDir(), 'state'),
      '--port',
      '0',
      '--no-harnesses',
      '--inspect',
      '--inspect-url',
      url,
    ]);
    try {
      assert.equal((await http(serve.ready, 'POST', '/tasks', { body: { ...SPEC, taskId: 'insp-1' } })).status, 201);
      await seen;
      assert.ok(
        messages.some((m) => m.includes('"supervisor"')),
        'the supervisor actor is inspected too',
      );
    } finally {
      assert.equal((await serve.stop()).code, 0, serve.stderr());
      peer.closeAllConnections();
      peer.close();
    }
  });
});
