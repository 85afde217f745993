import type { Committed } from './send-result.js';

/**
 * Which commits made by other Hosts of a cluster (seen through its watch) a subscriber hears: all
 * of them, none, or those of the Tasks the function accepts (asked again at each commit, so it may
 * follow what a subscriber's clients watch). This Host's own commits are heard whatever it says.
 * Every other Host's commit a subscriber asks for is read from the database and replayed through
 * the statechart here, so a Host nobody asks does neither (docs/many-hosts.md, "Wake-ups").
 */
export type RemoteInterest = 'all' | 'none' | ((taskId: string) => boolean);

/** `Supervisor.subscribe`'s options. */
export interface SubscribeOptions {
  /** Other Hosts' commits heard (default `'all'`); without a cluster there are none. */
  remote?: RemoteInterest;
}

interface Listener {
  hear: (committed: Committed) => void;
  remote: RemoteInterest;
}

const wants = (remote: RemoteInterest, taskId: string): boolean =>
  remote === 'all' ? true : remote === 'none' ? false : remote(taskId);

/** The Supervisor's subscribers: each hears every commit after it is durable; one that throws does not stop the others. */
export class CommitListeners {
  private readonly listeners = new Set<Listener>();

  /** Adds a listener; returns the unsubscribe function. */
  add(hear: (committed: Committed) => void, options: SubscribeOptions = {}): () => void {
    const listener: Listener = { hear, remote: options.remote ?? 'all' };
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tells every listener one of this Host's commits. */
  tell(committed: Committed): void {
    for (const listener of this.listeners) this.deliver(listener, committed);
  }

  /** Tells another Host's commit to the listeners that asked for its Task. */
  tellRemote(committed: Committed): void {
    for (const listener of this.listeners) if (this.asks(listener, committed.taskId)) this.deliver(listener, committed);
  }

  /** Whether any listener asks for other Hosts' commits of `taskId`. */
  wantsRemote(taskId: string): boolean {
    for (const listener of this.listeners) if (this.asks(listener, taskId)) return true;
    return false;
  }

  /** Whether any listener may ask for other Hosts' commits at all (a function counts: it may accept some Task). */
  wantsAnyRemote(): boolean {
    for (const listener of this.listeners) if (listener.remote !== 'none') return true;
    return false;
  }

  private asks(listener: Listener, taskId: string): boolean {
    try {
      return wants(listener.remote, taskId);
    } catch {
      return false; // a listener's failure is its own
    }
  }

  private deliver(listener: Listener, committed: Committed): void {
    try {
      listener.hear(committed);
    } catch {
      /* a listener's failure is its own */
    }
  }
}
