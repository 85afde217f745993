import { join } from 'node:path';
import { openHost, type Host } from '../../../frontier/index.js';
import type { Supervisor } from '../../../kernel/index.js';
import {
  providerEffectAdapter,
  readProviderRecords,
  putTarget,
  setProviderFaults,
  type ProviderProcess,
} from '../provider/index.js';
import type { W1Trajectory } from './faults.js';
import { hostPathHarness, hostPathSpec, type W1Effect } from './spec.js';

/** The states a W1 Task rests in: recorded or refused (`waiting`), put to an operator, or blocked. */
export const W1_RESTS = ['waiting', 'effect_unknown.held', 'blocked'];

/** How long the adapter waits for an answer the trajectory holds past it (`delay-past-timeout`, `lookup-expired`). */
export const W1_TIMEOUT_MS = 1000;

/** How long it waits on every other trajectory, where no answer is meant to be late: only a fault loses one, never a slow machine. */
export const W1_ANSWER_WAIT_MS = 30_000;

/** The adapter's timeout on a trajectory. */
export function w1TimeoutOf(trajectory: Pick<W1Trajectory, 'fault'>): number {
  return trajectory.fault === 'delay-past-timeout' || trajectory.fault === 'lookup-expired'
    ? W1_TIMEOUT_MS
    : W1_ANSWER_WAIT_MS;
}

/** What the Host path did on one trajectory, read back from the Task and the provider's records. */
export interface HostPathOutcome {
  trajectory: string;
  taskId: string;
  /** The state the Task rests in. */
  state: string;
  /** The Effect's status (`recorded`, `unknown`, `failed`, …), or `none` when no intent was made. */
  effect: string;
  /** Every code the Task's journal retained an event under, in order (context_stale, effect_endpoint_changed, …). */
  refusals: string[];
  /** How many intents the Host made (each under its own request id). */
  intents: number;
  /** Operator DecisionRequests opened. */
  operatorRequests: number;
  /** The Effect's durable objects: intents, receipts and requests. */
  stateObjects: number;
  /** Performs the provider's records hold under the trajectory's reference. */
  performs: number;
  /** Of those, the ones done on another target version than an intent of the Task observed. */
  staleRecords: number;
  /**
   * From the decision the Host acts on (or the restart, after a kill) to the Task's last event, by
   * the events' own times: what the baselines time from their first send.
   */
  elapsedMs: number;
}

export function effectOf(trajectory: W1Trajectory): W1Effect {
  return { operation: trajectory.operation, target: `w1/${trajectory.name}`, reference: `w1-${trajectory.name}` };
}

/** The fault the agent sets while it works (the world moving between observation and perform), if any. */
function agentFault(trajectory: W1Trajectory): unknown {
  if (trajectory.fault === 'identity-changed') return { identity: `${effectOf(trajectory).reference}.other-key` };
  if (trajectory.fault === 'target-changed') return { moveTarget: effectOf(trajectory).target };
  return undefined;
}

/**
 * The fault set on the provider before the Task is assigned. A held answer is released by the
 * harness after the rest of the fault (the kill, the restart, the clock advance), or never comes:
 * the adapter's timeout ends the wait.
 */
function providerFault(trajectory: W1Trajectory): Parameters<typeof setProviderFaults>[1] | undefined {
  const operations = [trajectory.operation];
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

export function hostPathHarnesses(
  trajectories: readonly W1Trajectory[],
  provider: Pick<ProviderProcess, 'url'>,
  markers: string,
) {
  return Object.fromEntries(
    trajectories.map((t) => [
      `agent-${t.name}`,
      hostPathHarness({
        faultsUrl: new URL('/_faults', provider.url).href,
        fault: agentFault(t),
        marker: join(markers, `${t.name}.fault`),
      }),
    ]),
  );
}

export function openW1Host(
  state: string,
  provider: Pick<ProviderProcess, 'url'>,
  trajectories: readonly W1Trajectory[],
  timeoutMs: number,
  onStep?: (taskId: string, text: string) => void,
): Promise<Host> {
  return openHost({
    state,
    harnesses: hostPathHarnesses(trajectories, provider, state),
    effectAdapters: {
      provider: providerEffectAdapter({
        url: provider.url,
        idFile: join(state, 'transfer-ids.jsonl'),
        timeoutMs,
      }),
    },
    ...(onStep ? { onStep } : {}),
  });
}

/** Creates the trajectory's Task and assigns its decision stage; resolves with its id. */
export async function startTrajectory(
  sup: Supervisor,
  provider: Pick<ProviderProcess, 'url'>,
  trajectory: W1Trajectory,
): Promise<string> {
  const effect = effectOf(trajectory);
  await putTarget(provider.url, effect.target, { revision: 1 });
  const fault = providerFault(trajectory);
  if (fault) await setProviderFaults(provider.url, fault);
  const { taskId } = await sup.createTask(hostPathSpec(effect, trajectory.name));
  const sent = await sup.send(taskId, { type: 'assignment.commit', harness: `agent-${trajectory.name}`, stage: 'act' });
  if (!sent.admitted) throw new Error(`${trajectory.name}: assignment refused (${JSON.stringify(sent)})`);
  return taskId;
}

/** The outcome of a Task at rest, read from its journal and context and from the provider's records file. */
export function readOutcome(
  sup: Supervisor,
  provider: Pick<ProviderProcess, 'dir'>,
  trajectory: W1Trajectory,
  taskId: string,
  sinceMs = 0,
): HostPathOutcome {
  const task = sup.getTask(taskId);
  const events = sup.events(taskId);
  const reference = effectOf(trajectory).reference;
  const records = readProviderRecords(provider.dir).filter((r) => r.reference === reference);
  const digests = new Set<string>();
  for (const event of events) {
    if (!event.type.startsWith('effect.') && !event.type.startsWith('request.')) continue;
    for (const [key, value] of Object.entries(event.data)) {
      if (/Digests?$/.test(key)) for (const d of [value].flat()) if (typeof d === 'string') digests.add(d);
    }
  }
  const requests = Object.values(task?.context.requests ?? {});
  const decided = events.find((e) => e.type === 'decision.submit' && e.disposition.admitted);
  const from = Math.max(sinceMs, decided ? Date.parse(decided.at) : 0);
  const elapsedMs = Math.max(0, Date.parse(events.at(-1)?.at ?? new Date(from).toISOString()) - from);
  // An ETag is compared as the version it quotes.
  const bare = (version: string) => version.replace(/^W\//, '').replace(/^"|"$/g, '');
  const observed = new Set(
    events
      .filter((e) => e.type === 'effect.intend' && e.disposition.admitted)
      .map((e) => sup.getObject(String(e.data['intentDigest']))?.body as { targetVersion?: string | null } | undefined)
      .flatMap((intent) => (typeof intent?.targetVersion === 'string' ? [bare(intent.targetVersion)] : [])),
  );
  return {
    trajectory: trajectory.name,
    taskId,
    state: String(task?.state ?? 'unknown'),
    effect: task?.context.effect?.status ?? 'none',
    refusals: events.flatMap((e) => (e.disposition.admitted ? [] : [(e.disposition as { code: string }).code])),
    intents: events.filter((e) => e.type === 'effect.intend' && e.disposition.admitted).length,
    operatorRequests: requests.filter((r) => r.about === 'effect').length,
    stateObjects: digests.size,
    performs: records.length,
    staleRecords: records.filter((r) => !observed.has(bare(r.targetVersion))).length,
    elapsedMs,
  };
}
