import { createHash, type Hash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { OutputEvidence } from './job-record.js';

/**
 * Digests one output stream as it flows, without keeping it: the first `capBytes` bytes go into a
 * sha256, every byte is counted, and the last `tailBytes` are kept for the record.
 */
export class OutputCapture {
  private readonly hash: Hash = createHash('sha256');
  private bytes = 0;
  private captured = 0;
  private tail: Buffer = Buffer.alloc(0);

  constructor(
    private readonly capBytes: number,
    private readonly tailBytes: number,
  ) {}

  /** Feeds every chunk of `stream` into this capture. */
  attach(stream: Readable | null | undefined): void {
    stream?.on('data', (chunk: Buffer) => this.push(chunk));
  }

  push(chunk: Buffer): void {
    this.bytes += chunk.length;
    const room = this.capBytes - this.captured;
    if (room > 0) {
      const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
      this.hash.update(part);
      this.captured += part.length;
    }
    if (this.tailBytes > 0) {
      const joined = this.tail.length === 0 ? chunk : Buffer.concat([this.tail, chunk]);
      this.tail = Buffer.from(joined.subarray(Math.max(0, joined.length - this.tailBytes)));
    }
  }

  /** The evidence so far; call once, after the stream ended. */
  evidence(): OutputEvidence {
    return {
      bytes: this.bytes,
      capturedBytes: this.captured,
      digest: 'sha256:' + this.hash.copy().digest('hex'),
      truncated: this.bytes > this.captured,
      tail: this.tail.toString('utf8'),
    };
  }
}
