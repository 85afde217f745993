import { BASELINE_FAULTS, OPERATIONS, type BaselineFault } from '../baselines/index.js';
import type { Operation } from '../provider/index.js';

/** One trajectory: one Effect meant once, one operation, one fault; every variant runs each. */
export interface W1Trajectory {
  name: string;
  operation: Operation;
  fault: BaselineFault;
}

/** Every (operation, fault); a lookup window exists only where a lookup by key does (orders). */
export const W1_TRAJECTORIES: readonly W1Trajectory[] = OPERATIONS.flatMap((operation) =>
  BASELINE_FAULTS.filter((fault) => fault !== 'lookup-expired' || operation === 'orders').map((fault) => ({
    name: `${operation}-${fault}`,
    operation,
    fault,
  })),
);
