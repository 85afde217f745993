import type { Committed } from './send-result.js';

/** The Supervisor's subscribers: each hears every commit after it is durable; one that throws does not stop the others. */
export class CommitListeners {
  private readonly listeners = new Set<(committed: Committed) => void>();

  /** Adds a listener; returns the unsubscribe function. */
  add(listener: (committed: Committed) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  tell(committed: Committed): void {
    for (const listener of this.listeners) {
      try {
        listener(committed);
      } catch {
        /* a listener's failure is its own */
      }
    }
  }
}
