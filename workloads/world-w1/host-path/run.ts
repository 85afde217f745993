import { demoConfinement } from '../../shared/confinement.js';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openHost, type Host } from '../../../host/index.js';
import type { Supervisor } from '../../../kernel/index.js';
import type { W1Trajectory } from './faults.js';
import { hostPathHarness } from './spec.js';
import type { W1HostSurface } from './surface.js';

/** The states a W1 Task rests in: recorded or refused (`waiting`), put to an operator, or blocked. */
export const W1_RESTS = ['waiting', 'effect_unknown.held', 'blocked'];

/** What the Host path did on one trajectory, read back from the Task and the system's records. */
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
  /** Performs the system's records hold for the trajectory (the provider's by reference, the web app's by input digest). */
  performs: number;
  /** Of those, the ones done on another target version than an intent of the Task observed. */
  staleRecords: number;
  /** How the Effect was recorded (`perform`, `lookup`), or null when it was not. */
  via: string | null;
  /**
   * From the decision the Host acts on (or the restart, after a kill) to the Task's last event, by
   * the events' own times: what the baselines time from their first send.
   */
  elapsedMs: number;
}

/** One agent harness per trajectory (`agent-<name>`), moving the world on its first run where the trajectory says. */
export function hostPathHarnesses(trajectories: readonly W1Trajectory[], surface: W1HostSurface, markers: string) {
  return Object.fromEntries(
    trajectories.map((t) => {
      const fault = surface.agentFault(t);
      return [
        `agent-${t.name}`,
        hostPathHarness(
          fault ? { faultsUrl: fault.url, fault: fault.body, marker: join(markers, `${t.name}.fault`) } : {},
        ),
      ];
    }),
  );
}

export function openW1Host(
  state: string,
  surface: W1HostSurface,
  trajectories: readonly W1Trajectory[],
  timeoutMs: number,
): Promise<Host> {
  // The agents' markers live beside the state root, never in it: a confined agent cannot see it.
  const markers = `${state}.markers`;
  mkdirSync(markers, { recursive: true });
  return openHost({
    state,
    harnesses: hostPathHarnesses(trajectories, surface, markers),
    confinement: demoConfinement(),
    effectAdapters: surface.adapters(timeoutMs, state),
  });
}

/** Readies the trajectory on the surface, creates its Task and assigns its decision stage; resolves with its id. */
export async function startTrajectory(
  sup: Supervisor,
  surface: W1HostSurface,
  trajectory: W1Trajectory,
): Promise<string> {
  const { taskId } = await sup.createTask(await surface.prepare(trajectory));
  const sent = await sup.send(taskId, { type: 'assignment.commit', harness: `agent-${trajectory.name}`, stage: 'act' });
  if (!sent.admitted) throw new Error(`${trajectory.name}: assignment refused (${JSON.stringify(sent)})`);
  return taskId;
}

/** The outcome of a Task at rest, read from its journal and context and from the system's records file. */
export function readOutcome(
  sup: Supervisor,
  surface: W1HostSurface,
  trajectory: W1Trajectory,
  taskId: string,
  sinceMs = 0,
): HostPathOutcome {
  const task = sup.getTask(taskId);
  const events = sup.events(taskId);
  const records = surface.performs(trajectory);
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
  const recorded = events.find((e) => e.type === 'effect.record' || e.type === 'effect.reconcile');
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
    via:
      task?.context.effect?.status === 'recorded' && recorded
        ? recorded.type === 'effect.record'
          ? 'perform'
          : 'lookup'
        : null,
    elapsedMs,
  };
}
