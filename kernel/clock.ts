/** Time as the Host sees it: wall time for people, a monotonic reading for ordering. Inject in tests. */
export interface Clock {
  wall(): string;
  mono(): number;
  /**
   * Calls `fire` once `ms` have passed on this clock (DecisionRequest deadlines); returns the
   * cancel. A clock without it gets the process's real timers, as `systemClock` sets them.
   */
  setTimer?(ms: number, fire: () => void): () => void;
}

/** Node's setTimeout takes at most 2^31-1 ms (a longer delay fires after 1 ms): longer ones are chained. */
const MAX_TIMEOUT = 2 ** 31 - 1;

/**
 * A real timer of `ms` (chained past setTimeout's limit), not holding the process open: a Host
 * serving keeps it alive by other means, and a deadline that passes while it is down is expired at boot.
 */
export function realTimer(ms: number, fire: () => void): () => void {
  let timer: ReturnType<typeof setTimeout>;
  const arm = (left: number) => {
    timer = setTimeout(left > MAX_TIMEOUT ? () => arm(left - MAX_TIMEOUT) : fire, Math.min(left, MAX_TIMEOUT));
    timer.unref();
  };
  arm(Math.max(0, ms));
  return () => clearTimeout(timer);
}

/** Wall time, `performance` time and real timers that do not keep the process alive: the default clock. */
export const systemClock: Clock = {
  wall: () => new Date().toISOString(),
  mono: () => performance.timeOrigin + performance.now(),
  setTimer: realTimer,
};

/** A manual clock: time moves only on `advance`, which fires the timers that came due, earliest first. */
export interface ManualClock extends Clock {
  setTimer(ms: number, fire: () => void): () => void;
  /**
   * Moves time `ms` on and fires every timer due by then, earliest first (one set while firing and
   * already due fires too). `{ fire: false }` only moves time: what is due fires on the next advance
   * (`advance(0)`), e.g. to admit an answer at the deadline before its timer has fired.
   */
  advance(ms: number, options?: { fire?: boolean }): void;
  /** Timers set and not yet fired or cancelled. */
  readonly timers: number;
}

/** A clock that advances only when told to; for tests. */
export function manualClock(startMs = Date.UTC(2026, 0, 1)): ManualClock {
  let now = startMs;
  let next = 0;
  const timers = new Map<number, { at: number; fire: () => void }>();
  return {
    wall: () => new Date(now).toISOString(),
    mono: () => now,
    setTimer(ms, fire) {
      const id = next++;
      timers.set(id, { at: now + Math.max(0, ms), fire });
      return () => timers.delete(id);
    },
    advance(ms, { fire = true } = {}) {
      now += ms;
      if (!fire) return;
      for (;;) {
        // Earliest deadline first; among equal ones, the first set (ids grow).
        const due = [...timers].filter(([, t]) => t.at <= now).sort(([a, x], [b, y]) => x.at - y.at || a - b)[0];
        if (!due) return;
        timers.delete(due[0]);
        due[1].fire();
      }
    },
    get timers() {
      return timers.size;
    },
  };
}
