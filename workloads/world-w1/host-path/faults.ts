import { BASELINE_FAULTS, OPERATIONS, type BaselineFault, type W1Operation } from '../baselines/index.js';
import type { Operation } from '../provider/index.js';

/** One trajectory: one Effect meant once, one operation, one fault; every variant runs each. */
export interface W1Trajectory<O extends W1Operation = W1Operation> {
  name: string;
  operation: O;
  fault: BaselineFault;
}

/** The provider's trajectories: every (operation, fault); a lookup window exists only where a lookup by key does (orders). */
export const W1_TRAJECTORIES: ReadonlyArray<W1Trajectory<Operation>> = OPERATIONS.flatMap((operation) =>
  BASELINE_FAULTS.filter((fault) => fault !== 'lookup-expired' || operation === 'orders').map((fault) => ({
    name: `${operation}-${fault}`,
    operation,
    fault,
  })),
);

/**
 * The faults a browser form meets: every W1 fault but `lookup-expired` (the web app's history by
 * note has no window). `delay-past-timeout` is the web app's `delay-confirmation`,
 * `provider-restart` a restart of the web app, `identity-changed` the site's identity,
 * `target-changed` the item's version.
 */
export const W1_WEBAPP_FAULTS = BASELINE_FAULTS.filter((fault) => fault !== 'lookup-expired');

/** The browser's trajectories: the web app's order form under each of its faults. */
export const W1_WEBAPP_TRAJECTORIES: ReadonlyArray<W1Trajectory<'webapp-orders'>> = W1_WEBAPP_FAULTS.map((fault) => ({
  name: `webapp-orders-${fault}`,
  operation: 'webapp-orders',
  fault,
}));
