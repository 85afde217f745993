import { realTimer, type Clock } from '../clock.js';
import type { TaskActor } from '../task-actor.js';

/**
 * The deadlines of pending DecisionRequests (docs/decision-requests.md): for each pending request
 * with an `expiresAt`, a timer on the Host's clock that sends `request.expire` {requestId, now}
 * when the clock reaches it. Armed after every commit from the Task's committed state, and at
 * boot from the state every Task was rebuilt to, when whatever came due while the Host was down
 * is expired before it serves.
 *
 * Nothing here is durable: the deadline is (the request's `expiresAt`, in the journal), and the
 * kernel decides expiry on the clock it writes into each answer, so an answer at or past the
 * deadline is `decision_expired` whether or not its timer has fired yet. If the process dies
 * before a timer fires, boot expires the request; if it dies after the timer fired and before
 * `request.expire` was committed, boot sends it again (the statechart takes it only while the
 * request is pending, so a second one writes nothing).
 */
export class RequestDeadlines {
  /** The cancel of each armed timer, by Task and request id. */
  private readonly armed = new Map<string, Map<string, () => void>>();
  private stopped = false;

  constructor(private readonly clock: Clock) {}

  /** The Host's clock reading, epoch ms: the same the kernel writes into an answer. */
  private now(): number {
    return Date.parse(this.clock.wall());
  }

  /**
   * After a commit of `task` (and for each Task at boot): arms a timer for each pending request
   * with a deadline not armed yet, sends `request.expire` at once for one already due, and cancels
   * the timers of requests no longer pending. A finished Task takes no events: its timers go.
   */
  committed(task: TaskActor): void {
    if (this.stopped) return;
    const armed = this.armed.get(task.taskId) ?? new Map<string, () => void>();
    const pending = new Map<string, number>();
    if (!task.done)
      for (const [id, r] of Object.entries(task.context.requests))
        if (r.status === 'pending' && r.expiresAt !== null) pending.set(id, r.expiresAt);
    for (const [id, cancel] of armed)
      if (!pending.has(id)) {
        cancel();
        armed.delete(id);
      }
    for (const [id, expiresAt] of pending) if (!armed.has(id)) this.arm(task, armed, id, expiresAt);
    if (armed.size > 0) this.armed.set(task.taskId, armed);
    else this.armed.delete(task.taskId);
  }

  /** Boot: arms every Task's deadlines and resolves once the ones already due are expired (committed). */
  async boot(tasks: Iterable<TaskActor>): Promise<void> {
    const all = [...tasks];
    for (const task of all) this.committed(task);
    await Promise.all(all.map((task) => task.settled()));
  }

  /** Cancels one Task's timers (it is no longer served here). */
  forget(taskId: string): void {
    for (const cancel of this.armed.get(taskId)?.values() ?? []) cancel();
    this.armed.delete(taskId);
  }

  /** Cancels every timer; nothing more is armed or sent (the Supervisor drains). */
  stop(): void {
    this.stopped = true;
    for (const armed of this.armed.values()) for (const cancel of armed.values()) cancel();
    this.armed.clear();
  }

  private arm(task: TaskActor, armed: Map<string, () => void>, requestId: string, expiresAt: number): void {
    const delay = expiresAt - this.now();
    if (delay <= 0) {
      // Due already (came due while the Host was down): expired now, in the Task's mailbox order.
      armed.set(requestId, () => {});
      void this.expire(task, requestId);
      return;
    }
    const setTimer = this.clock.setTimer?.bind(this.clock) ?? realTimer;
    armed.set(
      requestId,
      setTimer(delay, () => {
        armed.delete(requestId);
        void this.expire(task, requestId);
      }),
    );
  }

  /**
   * Sends `request.expire` with the clock's reading. A timer that fired early (the clock says the
   * deadline is still ahead) writes nothing; the commit hook or this re-arms it.
   */
  private async expire(task: TaskActor, requestId: string): Promise<void> {
    if (this.stopped) return;
    const result = await task.send({ type: 'request.expire', requestId, now: this.now() }, 'host');
    if (!result.written && !this.stopped) {
      const armed = this.armed.get(task.taskId);
      const request = task.context.requests[requestId];
      armed?.delete(requestId);
      if (request?.status === 'pending' && request.expiresAt !== null && request.expiresAt > this.now())
        this.committed(task);
    }
  }
}
