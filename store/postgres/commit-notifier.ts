/** The channel Hosts LISTEN on for commits; a payload is comma-joined Task ids (docs/many-hosts.md#wake-ups). */
export const COMMITS_CHANNEL = 'ordivon_commits';

/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more (`NOTIFY_PAYLOAD_MAX_LENGTH`). */
export const MAX_PAYLOAD_BYTES = 7999;

/** How long commits are gathered before one NOTIFY names them all. */
export const DEFAULT_NOTIFY_WINDOW_MS = 20;

/**
 * Task ids joined with commas, cut into payloads of at most `maxBytes` bytes each. An id that
 * cannot be sent (it holds a comma, or alone exceeds the limit) is left out: a watcher finds its
 * commit by polling.
 */
export function notifyPayloads(taskIds: Iterable<string>, maxBytes = MAX_PAYLOAD_BYTES): string[] {
  const payloads: string[] = [];
  let current = '';
  let bytes = 0;
  for (const id of taskIds) {
    const size = Buffer.byteLength(id);
    if (id.includes(',') || size === 0 || size > maxBytes) continue;
    if (current !== '' && bytes + 1 + size > maxBytes) {
      payloads.push(current);
      current = '';
      bytes = 0;
    }
    bytes += current === '' ? size : size + 1;
    current = current === '' ? id : `${current},${id}`;
  }
  if (current !== '') payloads.push(current);
  return payloads;
}

/**
 * Tells other Hosts that Tasks moved, as a hint only. A NOTIFY inside the append's transaction
 * would take PostgreSQL's global notify lock at every commit (commits then queue behind each
 * other), so commits are noted here and, once per window, one separate statement sends their ids
 * (several payloads when they do not fit in one). Nothing waits for it and its failure is dropped:
 * watchers poll, so a lost NOTIFY only delays what they see by up to their poll interval.
 */
export class CommitNotifier {
  private readonly pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> | undefined;
  private closed = false;

  constructor(
    /** Sends the payloads in one statement (its own transaction). */
    private readonly send: (payloads: string[]) => Promise<unknown>,
    private readonly windowMs = DEFAULT_NOTIFY_WINDOW_MS,
  ) {}

  /** A commit of `taskId` is durable: name it in the next NOTIFY. */
  note(taskId: string): void {
    if (this.closed) return;
    this.pending.add(taskId);
    if (!this.timer && !this.sending) this.schedule();
  }

  /** Sends what is pending now, then sends no more. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.sending;
    if (this.pending.size > 0) await this.flush();
  }

  private schedule(): void {
    this.timer = setTimeout(() => void this.flush(), this.windowMs);
    // A hint must not keep a process alive that has nothing else to do.
    this.timer.unref();
  }

  private flush(): Promise<void> {
    this.timer = undefined;
    const payloads = notifyPayloads(this.pending);
    this.pending.clear();
    this.sending = (payloads.length === 0 ? Promise.resolve() : this.send(payloads))
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        this.sending = undefined;
        if (this.pending.size > 0 && !this.closed) this.schedule();
      });
    return this.sending;
  }
}
