import { join } from 'node:path';
import {
  Operation,
  providerEffectAdapter,
  putTarget,
  readProviderRecords,
  releaseHeld,
  setProviderFaults,
  type ProviderProcess,
} from '../provider/index.js';
import { held } from '../compare/wait.js';
import type { W1Trajectory } from './faults.js';
import { hostPathSpec, type W1Effect } from './spec.js';
import type { W1HostSurface } from './surface.js';

/** How long the adapter waits for an answer the trajectory holds past it (`delay-past-timeout`, `lookup-expired`). */
export const W1_TIMEOUT_MS = 1000;

/** How long it waits on every other trajectory, where no answer is meant to be late: only a fault loses one, never a slow machine. */
export const W1_ANSWER_WAIT_MS = 30_000;

export function effectOf(trajectory: Pick<W1Trajectory, 'name' | 'operation'>): W1Effect {
  return { operation: trajectory.operation, target: `w1/${trajectory.name}`, reference: `w1-${trajectory.name}` };
}

/**
 * The fault set on the provider before the Task is assigned. A held answer is released by the
 * harness after the rest of the fault (the kill, the restart, the clock advance), or never comes:
 * the adapter's timeout ends the wait.
 */
function providerFault(trajectory: W1Trajectory): Parameters<typeof setProviderFaults>[1] | undefined {
  // The provider's operations only: a trajectory of another surface is refused here.
  const operations = [Operation.parse(trajectory.operation)];
  switch (trajectory.fault) {
    case 'commit-then-drop':
      return { drop: { operations, times: 1 } };
    case 'delay-past-timeout':
    case 'host-sigkill':
    case 'provider-restart':
    case 'lookup-expired':
      // Held until the harness does the rest of the fault (kill, restart, clock advance).
      return { delay: { operations, ms: 600_000, times: 1 } };
    default:
      return undefined;
  }
}

/**
 * The provider behind the HTTP adapter (`providerEffectAdapter`, registered as `provider`): each
 * trajectory on a target of its own, every perform counted by its reference. A child process gets
 * the same surface without `process` (it never restarts the provider).
 */
export function providerSurface(
  provider: Pick<ProviderProcess, 'url' | 'dir'> & Partial<Pick<ProviderProcess, 'kill' | 'restart'>>,
): W1HostSurface {
  const { url } = provider;
  return {
    args: { kind: 'provider', url, dir: provider.dir },
    timeoutOf: (t) =>
      t.fault === 'delay-past-timeout' || t.fault === 'lookup-expired' ? W1_TIMEOUT_MS : W1_ANSWER_WAIT_MS,
    adapters: (timeoutMs, state) => ({
      provider: providerEffectAdapter({ url, idFile: join(state, 'transfer-ids.jsonl'), timeoutMs }),
    }),
    agentFault(t) {
      const body =
        t.fault === 'identity-changed'
          ? { identity: `${effectOf(t).reference}.other-key` }
          : t.fault === 'target-changed'
            ? { moveTarget: effectOf(t).target }
            : undefined;
      return body && { url: new URL('/_faults', url).href, body };
    },
    async prepare(t) {
      const effect = effectOf(t);
      await putTarget(url, effect.target, { revision: 1 });
      const fault = providerFault(t);
      if (fault) await setProviderFaults(url, fault);
      return hostPathSpec(effect, t.name);
    },
    holding: () => held(provider, 1),
    async restart() {
      // Killed, not stopped: a stopping server answers what it holds. Its records keep the commit.
      await provider.kill!();
      await provider.restart!();
    },
    // The answer never comes (the caller times out) and the window passes before the lookup.
    expireLookups: () => setProviderFaults(url, { advanceClockMs: 2 * 24 * 3600 * 1000 }).then(() => undefined),
    async reset() {
      await releaseHeld(url);
      await setProviderFaults(url, { drop: null, delay: null, identity: null });
    },
    performs: (t) => readProviderRecords(provider.dir).filter((r) => r.reference === effectOf(t).reference),
  };
}
