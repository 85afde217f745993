import type { Clock } from './clock.js';
import type { DriverKind } from './receipt.js';

export interface RestartIntensityOptions {
  /** Crashes tolerated within `withinMs`; one more makes the driver kind unavailable (OTP's MaxR). */
  maxRestarts: number;
  /** The sliding window, and how long a tripped kind stays unavailable (OTP's MaxT). */
  withinMs: number;
  /** Wait before a kind's next run after its c-th crash in the window: min(initialMs·2^(c−1), maxMs). */
  backoff: { initialMs: number; maxMs: number };
  clock: Clock;
}

/** Whether a run of a kind may be dispatched now, after a wait, or not at all. */
export type IntensityGate =
  { state: 'open'; waitMs: number; crashesInWindow: number } | { state: 'unavailable'; until: number; detail: string };

/** Supervision facts for one driver kind, as `stats()` shows them. */
export interface KindSupervision {
  crashesInWindow: number;
  lastCrashAt: number | null;
  /** Clock time before which the next run waits (backoff), or null. */
  backoffUntil: number | null;
  /** Clock time until which runs are refused `driver_unavailable`, or null. */
  unavailableUntil: number | null;
}

/**
 * Restart intensity per driver kind, as in OTP supervisors: more than `maxRestarts` crashes
 * within `withinMs` trips the kind for `withinMs` (until `reset`), and each crash delays the
 * kind's next run by an exponential backoff. Pure bookkeeping over `clock.now()`; it runs nothing.
 */
export class RestartIntensity {
  readonly #options: RestartIntensityOptions;
  readonly #crashes = new Map<DriverKind, number[]>();
  readonly #tripped = new Map<DriverKind, { until: number; crashes: number }>();

  constructor(options: RestartIntensityOptions) {
    this.#options = options;
  }

  /** Records a crash of `kind`; returns true when this crash tripped the kind. */
  recordCrash(kind: DriverKind): boolean {
    const now = this.#options.clock.now();
    const crashes = this.#window(kind, now);
    crashes.push(now);
    if (crashes.length > this.#options.maxRestarts && !this.#tripped.has(kind)) {
      this.#tripped.set(kind, { until: now + this.#options.withinMs, crashes: crashes.length });
      return true;
    }
    return false;
  }

  /** Decides whether a run of `kind` may go now, after `waitMs`, or is refused. */
  gate(kind: DriverKind): IntensityGate {
    const now = this.#options.clock.now();
    const tripped = this.#tripped.get(kind);
    if (tripped !== undefined) {
      if (now < tripped.until) {
        const { maxRestarts, withinMs } = this.#options;
        return {
          state: 'unavailable',
          until: tripped.until,
          detail:
            `driver '${kind}' is unavailable: ${tripped.crashes} crashes within ${withinMs} ms exceeded its restart ` +
            `intensity (at most ${maxRestarts}); it reopens in ${tripped.until - now} ms or on reset('${kind}')`,
        };
      }
      this.#tripped.delete(kind);
    }
    const crashes = this.#window(kind, now);
    const backoffUntil = this.#backoffUntil(crashes);
    return { state: 'open', waitMs: Math.max(0, backoffUntil - now), crashesInWindow: crashes.length };
  }

  /** Forgets the crashes of `kind` and reopens it. */
  reset(kind: DriverKind): void {
    this.#crashes.delete(kind);
    this.#tripped.delete(kind);
  }

  /** Current supervision facts of `kind`. */
  inspect(kind: DriverKind): KindSupervision {
    const now = this.#options.clock.now();
    const crashes = this.#window(kind, now);
    const tripped = this.#tripped.get(kind);
    const backoffUntil = this.#backoffUntil(crashes);
    return {
      crashesInWindow: crashes.length,
      lastCrashAt: crashes.at(-1) ?? null,
      backoffUntil: backoffUntil > now ? backoffUntil : null,
      unavailableUntil: tripped !== undefined && tripped.until > now ? tripped.until : null,
    };
  }

  #window(kind: DriverKind, now: number): number[] {
    const horizon = now - this.#options.withinMs;
    const kept = (this.#crashes.get(kind) ?? []).filter((at) => at > horizon);
    this.#crashes.set(kind, kept);
    return kept;
  }

  #backoffUntil(crashes: readonly number[]): number {
    const last = crashes.at(-1);
    if (last === undefined) return -Infinity;
    const { initialMs, maxMs } = this.#options.backoff;
    return last + Math.min(initialMs * 2 ** (crashes.length - 1), maxMs);
  }
}
