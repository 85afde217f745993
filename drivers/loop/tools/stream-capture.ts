import { cut } from './outcome.js';

/**
 * The head and the tail of a byte stream, at most `capBytes` of each, and how many bytes went
 * through: a command that floods its output costs bounded memory, and the model still sees how it
 * started and how it ended (where the error is).
 */
export class StreamCapture {
  readonly #cap: number;
  #head: Buffer[] = [];
  #headBytes = 0;
  #tail: Buffer[] = [];
  #tailBytes = 0;
  #total = 0;

  constructor(capBytes: number) {
    this.#cap = Math.max(0, capBytes);
  }

  push(chunk: Buffer): void {
    this.#total += chunk.length;
    let rest = chunk;
    if (this.#headBytes < this.#cap) {
      const taken = rest.subarray(0, this.#cap - this.#headBytes);
      this.#head.push(Buffer.from(taken));
      this.#headBytes += taken.length;
      rest = rest.subarray(taken.length);
    }
    if (rest.length === 0) return;
    this.#tail.push(Buffer.from(rest));
    this.#tailBytes += rest.length;
    while (this.#tailBytes > this.#cap) {
      const first = this.#tail[0]!;
      const excess = this.#tailBytes - this.#cap;
      if (first.length <= excess) {
        this.#tail.shift();
        this.#tailBytes -= first.length;
      } else {
        this.#tail[0] = first.subarray(excess);
        this.#tailBytes -= excess;
      }
    }
  }

  get empty(): boolean {
    return this.#total === 0;
  }

  /** Bytes dropped between the head and the tail. */
  get #gap(): number {
    return this.#total - this.#headBytes - this.#tailBytes;
  }

  /** Characters `text` would take unbounded (bytes, where the middle was dropped). */
  get chars(): number {
    return this.#gap === 0 ? this.#whole().length : this.#total;
  }

  #whole(): string {
    return Buffer.concat([...this.#head, ...this.#tail]).toString('utf8');
  }

  /** The stream as text in at most `budget` characters (where it can be), its head and tail kept, saying how much was cut. */
  text(budget: number): string {
    if (this.#gap === 0) return cut(this.#whole(), budget, 'head-and-tail');
    const head = Buffer.concat(this.#head).toString('utf8');
    const tail = Buffer.concat(this.#tail).toString('utf8');
    // Reserved for the longest marker the count can make; the kept text is measured in bytes after.
    const reserve = `\n[… ${this.#total} bytes cut …]\n`.length;
    const half = Math.max(0, Math.floor((budget - reserve) / 2));
    const keptHead = head.slice(0, half);
    const keptTail = tail.slice(tail.length - half);
    const dropped = this.#total - Buffer.byteLength(keptHead) - Buffer.byteLength(keptTail);
    return `${keptHead}\n[… ${dropped} bytes cut …]\n${keptTail}`;
  }
}
