/** Time as the Host sees it: wall time for people, a monotonic reading for ordering. Inject in tests. */
export interface Clock {
  wall(): string;
  mono(): number;
}

export const systemClock: Clock = {
  wall: () => new Date().toISOString(),
  mono: () => performance.timeOrigin + performance.now(),
};

/** A clock that advances only when told to; for tests. */
export function manualClock(startMs = Date.UTC(2026, 0, 1)): Clock & { advance(ms: number): void } {
  let now = startMs;
  return {
    wall: () => new Date(now).toISOString(),
    mono: () => now,
    advance(ms: number) {
      now += ms;
    },
  };
}
