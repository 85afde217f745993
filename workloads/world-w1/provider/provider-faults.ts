import type { Operation } from './provider-schema.js';

export interface Switch {
  operations: Operation[];
  remaining: number | null;
}

/** The fault switches: each committed perform of a listed operation takes one turn of a switch. */
export class Faults {
  drop: Switch | null = null;
  delay: (Switch & { ms: number }) | null = null;
  identityKey: string | null = null;
  readonly held = new Set<() => void>();

  static take<S extends Switch>(current: S | null, operation: Operation): [hit: boolean, next: S | null] {
    if (current === null || !current.operations.includes(operation)) return [false, current];
    if (current.remaining === null) return [true, current];
    return [true, current.remaining > 1 ? { ...current, remaining: current.remaining - 1 } : null];
  }

  /** Which faults this committed perform hits. */
  takeFor(operation: Operation): { drop: boolean; delayMs: number | undefined } {
    const [drop, nextDrop] = Faults.take(this.drop, operation);
    this.drop = nextDrop;
    if (drop) return { drop, delayMs: undefined };
    const ms = this.delay?.ms;
    const [delay, nextDelay] = Faults.take(this.delay, operation);
    this.delay = nextDelay;
    return { drop: false, delayMs: delay ? ms : undefined };
  }

  release(): number {
    const count = this.held.size;
    for (const go of [...this.held]) go();
    return count;
  }
}
