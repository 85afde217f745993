const NEWLINE = 0x0a;

/**
 * Keeps the last `capBytes` of a byte stream and counts what went through it, so a child that
 * floods stdout costs bounded memory. `push` is synchronous and O(chunk): the stream stays in
 * flowing mode and the child is never blocked on a full pipe.
 */
export class OutputTail {
  readonly capBytes: number;
  #chunks: Buffer[] = [];
  #retained = 0;
  #bytes = 0;
  #lines = 0;
  /** The current (unterminated) line has at least one byte. */
  #lineOpen = false;

  constructor(capBytes: number) {
    this.capBytes = capBytes;
  }

  push(chunk: Buffer): void {
    this.#bytes += chunk.length;
    this.#countLines(chunk);
    this.#chunks.push(chunk);
    this.#retained += chunk.length;
    while (this.#retained > this.capBytes) {
      const head = this.#chunks[0]!;
      const excess = this.#retained - this.capBytes;
      if (head.length <= excess) {
        this.#chunks.shift();
        this.#retained -= head.length;
      } else {
        // Copy so the trimmed remainder does not pin the whole (possibly pooled) read buffer.
        this.#chunks[0] = Buffer.from(head.subarray(excess));
        this.#retained -= excess;
      }
    }
  }

  /** Total bytes seen. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Bytes currently held (never more than `capBytes`). */
  get retainedBytes(): number {
    return this.#retained;
  }

  /** Non-empty lines seen, counting a final line without a newline. */
  get lines(): number {
    return this.#lines + (this.#lineOpen ? 1 : 0);
  }

  /** The retained tail as UTF-8 (its first character may be cut). */
  text(): string {
    return Buffer.concat(this.#chunks, this.#retained).toString('utf8');
  }

  /** Last line of the tail with visible content, trimmed, or undefined; capped to its last `maxChars`. */
  lastLine(maxChars: number): string | undefined {
    const lines = this.text().split('\n');
    for (let i = lines.length - 1; i >= 0; i--) {
      const line = lines[i]!.trim();
      if (line.length > 0) return line.length > maxChars ? line.slice(line.length - maxChars) : line;
    }
    return undefined;
  }

  #countLines(chunk: Buffer): void {
    let from = 0;
    for (;;) {
      const at = chunk.indexOf(NEWLINE, from);
      if (at === -1) {
        if (from < chunk.length) this.#lineOpen = true;
        return;
      }
      if (at > from || this.#lineOpen) this.#lines++;
      this.#lineOpen = false;
      from = at + 1;
    }
  }
}
