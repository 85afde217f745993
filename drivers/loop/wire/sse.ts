/** One Server-Sent Event: its `event:` name, if the stream gave one, and its `data:` lines joined by `\n`. */
export interface SseFrame {
  event?: string;
  data: string;
}

/**
 * Reads a response body as Server-Sent Events (the WHATWG event-stream format): lines end in LF,
 * CRLF or CR, a blank line ends a frame, `:` lines are comments, `id:` and `retry:` are ignored (a
 * model call is never resumed). `onChunk` is called for every chunk read, before it is parsed. The
 * reader is cancelled when the caller stops early, so an abandoned stream does not hold the socket.
 */
export async function* sseFrames(body: ReadableStream<Uint8Array>, onChunk?: () => void): AsyncGenerator<SseFrame> {
  const reader = body.getReader();
  const lines = new LineSplitter();
  let frame = new FrameBuilder();
  let done = false;
  try {
    while (!done) {
      const next = await reader.read();
      done = next.done;
      if (!next.done) onChunk?.();
      for (const line of lines.push(next.value, done)) {
        if (line !== '') frame.field(line);
        else if (frame.hasData()) {
          yield frame.build();
          frame = new FrameBuilder();
        } else frame = new FrameBuilder();
      }
    }
    // The spec drops a frame the stream did not end with a blank line; a model's last frame is
    // still whole (its JSON is parsed), so it is delivered.
    if (frame.hasData()) yield frame.build();
  } finally {
    if (!done) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** Splits decoded text into lines across chunk boundaries, a CR at a chunk's end included. */
class LineSplitter {
  private readonly decoder = new TextDecoder();
  private buffer = '';

  push(chunk: Uint8Array | undefined, end: boolean): string[] {
    this.buffer += this.decoder.decode(chunk, { stream: !end });
    const lines: string[] = [];
    for (;;) {
      const at = this.buffer.search(/[\r\n]/);
      if (at < 0) break;
      // A CR last in the buffer may be the first half of a CRLF split between two chunks.
      if (this.buffer[at] === '\r' && at === this.buffer.length - 1 && !end) break;
      lines.push(this.buffer.slice(0, at));
      const width = this.buffer.startsWith('\r\n', at) ? 2 : 1;
      this.buffer = this.buffer.slice(at + width);
    }
    if (end && this.buffer !== '') lines.push(this.buffer);
    if (end) this.buffer = '';
    return lines;
  }
}

class FrameBuilder {
  private event: string | undefined;
  private data: string[] = [];

  field(line: string): void {
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'data') this.data.push(value);
    else if (name === 'event') this.event = value;
  }

  hasData(): boolean {
    return this.data.length > 0;
  }

  build(): SseFrame {
    const data = this.data.join('\n');
    return this.event === undefined ? { data } : { event: this.event, data };
  }
}
