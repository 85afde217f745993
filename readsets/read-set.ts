import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { StaleSource, TaskMachineContext } from '../machines/index.js';
import { resolveInside, sourceDigest, workspacePath } from '../runtime/index.js';
import { sha256, sha256Text, type EventStore } from '../store/index.js';
import {
  type ReadSetContext,
  type CompiledCandidate,
  type ReadSetItem,
  type Source,
  type Stage,
  type TaskSpec,
  type Trust,
  sourcesOf,
} from '../objects/index.js';

/**
 * A Context as a read set (docs/context.md): every item the provider's work is bound to, with its
 * identity, revision or digest, trust, claim status, why it was selected and what it depends on.
 * Trust is declared by the spec and propagates: a source that depends on an untrusted one is
 * untrusted, and a candidate has trusted authority only if every source supporting it is trusted.
 * Admission re-reads the trusted items and refuses work whose read set moved (`staleSources`).
 */

/** Where a spec source is: relative to the Task Attempt's workspace or to the spec's `world`. */
export type SourceLocation = Pick<Source, 'in' | 'path'>;

/** A source as read now: its digest (a tree digest for a directory) and, for small UTF-8 files, its text. */
export interface SourceRead {
  digest: string;
  text: string | null;
}

/** Reads a source's current digest; null when it is absent. */
export type SourceReader = (location: SourceLocation) => Promise<string | null>;

/** Where a state root keeps its Task Attempts' workspaces (`<state>/workspaces/<taskId>/attempt-<n>`). */
export function workspacesOf(stateRoot: string): string {
  return join(stateRoot, 'workspaces');
}

/**
 * The kernel's reader for one Task's read sets: `world` sources under the spec's `world`,
 * `workspace` sources in the Attempt's workspace under `workspaces` (the Supervisor's
 * `workspaces` option, by default `<state>/workspaces`), where `openHost` and `ordivon serve` put it. The Supervisor uses it whatever frontier runner it has (none, the Host's,
 * a test's), so an admission re-validates the same way however the Host was opened. It creates
 * nothing: a workspace not there reads as absent.
 */
export function kernelSourceReader(
  workspaces: string,
  task: { taskId: string; spec: Pick<TaskSpec, 'world'>; context: Pick<TaskMachineContext, 'attempt'> },
): SourceReader {
  const dirs = {
    workspace: workspacePath(workspaces, task.taskId, task.context.attempt),
    world: task.spec.world,
  };
  return async (location) => (await readSource(dirs, location))?.digest ?? null;
}

/** Larger files are bound by digest only, their text not shown. */
const TEXT_LIMIT = 64 * 1024;

/**
 * Reads a source under its root (`dirs.world` undefined: no world, the source is absent). A
 * workspace source is read only inside the workspace: a provider can write there, and a symlink
 * it left at a source's path must not carry a file from elsewhere into the next prompt, so one
 * that leads out reads as absent. The world is the spec author's and is read as it is.
 */
export async function readSource(
  dirs: { workspace: string; world?: string | undefined },
  location: SourceLocation,
): Promise<SourceRead | null> {
  const root = location.in === 'world' ? dirs.world : dirs.workspace;
  if (root === undefined) return null;
  let path = join(root, location.path);
  if (location.in === 'workspace') {
    const confined = resolveInside(root, location.path);
    if (!confined.ok) return null;
    path = confined.value;
  }
  const info = await stat(path).catch(() => undefined);
  if (!info) return null;
  if (info.isDirectory()) return { digest: await sourceDigest(path), text: null };
  const bytes = await readFile(path);
  let text: string | null = null;
  if (bytes.length <= TEXT_LIMIT) {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      text = null;
    }
  }
  return { digest: sha256(bytes), text };
}

/** The Task's Goal now: its revision, the digest an item binds, and its text. */
export function currentGoal(
  store: EventStore,
  spec: TaskSpec,
  context: TaskMachineContext,
): { revision: number; digest: string; text: string } {
  const { revision, digest } = context.goal ?? { revision: 1, digest: null };
  if (digest === null) return { revision, digest: sha256Text(spec.goal), text: spec.goal };
  return { revision, digest, text: store.getObject<{ goal: string }>(digest, 'goal').body.goal };
}

/** Each spec source's trust after propagation: trusted only if declared so and all it depends on is. */
export function sourceTrust(spec: TaskSpec): Map<string, Trust> {
  const declared = new Map(sourcesOf(spec).map((s) => [s.id, s]));
  const trust = new Map<string, Trust>([['goal', 'trusted']]);
  const of = (id: string): Trust => {
    const known = trust.get(id);
    if (known) return known;
    const source = declared.get(id);
    // The spec's check refuses cycles; an unknown id has no authority.
    const value: Trust =
      source?.trust === 'trusted' && source.dependsOn.every((dep) => of(dep) === 'trusted') ? 'trusted' : 'untrusted';
    trust.set(id, value);
    return value;
  };
  for (const id of declared.keys()) of(id);
  return trust;
}

/** The three parts of an Effect observation an item binds. */
export type ObservedAspect = 'endpoint' | 'target' | 'capabilities';

/** An Effect observation as items bind it: each aspect's value (capabilities as JSON; target null: absent). */
export type ObservationValues = {
  readonly endpoint: string;
  readonly target: string | null;
  readonly capabilities: string;
};

/** What an observation is of: an `effect` candidate's adapter, operation and target. */
export interface ObservationLocation {
  adapter: string;
  operation: string;
  target: string;
}

/**
 * Observes an Effect's endpoint and target now (the Host gives one built on its adapters'
 * `observe`); null when it cannot (no such adapter here, or `observe` failed).
 */
export type ObservationReader = (at: ObservationLocation) => Promise<ObservationValues | null>;

/** An observation's values, with the capabilities in a fixed key order so equal declarations compare equal. */
export function observationValues(observation: {
  endpointIdentity: string;
  targetVersion: string | null;
  capabilities: { idempotency: string; lookup: boolean; lookupWindowMs: number | null };
}): ObservationValues {
  const { idempotency, lookup, lookupWindowMs } = observation.capabilities;
  return {
    endpoint: observation.endpointIdentity,
    target: observation.targetVersion,
    capabilities: JSON.stringify({ idempotency, lookup, lookupWindowMs }),
  };
}

/** The digest an observation item binds for a value (null: absent). */
export function observedDigest(value: string | null): string {
  return value === null ? ABSENT : sha256Text(value);
}

/** The item id of one aspect of a candidate's observation: `effect:<candidate>/<aspect>`. */
export function observationItemId(candidateId: string, aspect: ObservedAspect): string {
  return `effect:${candidateId}/${aspect}`;
}

/** An `effect` candidate's observation, as the compiler binds it. */
export interface CandidateObservation extends ObservationLocation {
  values: ObservationValues;
}

/** What the compiler binds besides the Task's own objects. */
export interface ReadSetInput {
  spec: TaskSpec;
  context: TaskMachineContext;
  stage: Stage;
  goal: { revision: number; digest: string };
  workspaceDigest: string;
  /** Each spec source as read now (null: absent). */
  sources: ReadonlyMap<string, SourceRead | null>;
  /** Each `effect` candidate's observation by candidate id (only those whose adapter observes). */
  observations?: ReadonlyMap<string, CandidateObservation> | undefined;
}

const ASPECTS: ReadonlyArray<{ aspect: ObservedAspect; what: string }> = [
  { aspect: 'endpoint', what: "the endpoint's identity" },
  { aspect: 'target', what: "the target's version" },
  { aspect: 'capabilities', what: 'the capabilities it declares' },
];

/** The read-set items of one candidate's observation: endpoint identity, target version, capabilities. */
function observationItems(candidateId: string, observed: CandidateObservation): ReadSetItem[] {
  return ASPECTS.map(({ aspect, what }) => ({
    sourceId: observationItemId(candidateId, aspect),
    digest: observedDigest(observed.values[aspect]),
    trust: 'trusted' as const,
    claim: 'asserted' as const,
    selectedBy: `${what} as ${observed.adapter} states it now, for candidate ${candidateId} (${observed.operation} ${observed.target})`,
    dependsOn: [],
    observed: {
      candidateId,
      adapter: observed.adapter,
      operation: observed.operation,
      target: observed.target,
      aspect,
      value: observed.values[aspect],
    },
  }));
}

/** The read set of the current Assignment's Context, and its candidates for a decision stage. */
export function compileReadSet(input: ReadSetInput): Pick<ReadSetContext, 'items' | 'candidates'> {
  const { spec, context, stage } = input;
  const trust = sourceTrust(spec);
  const items: ReadSetItem[] = [...taskItems(input), ...sourceItems(input, trust), ...evidenceItems(context)];
  for (const candidate of stage.decision?.candidates ?? []) {
    const observed = input.observations?.get(candidate.id);
    if (observed) items.push(...observationItems(candidate.id, observed));
  }
  return { items, candidates: compiledCandidates(stage, trust) };
}

/** The Goal, the spec, the Assignment and the workspace the provider works on. */
function taskItems({ context, stage, goal, workspaceDigest }: ReadSetInput): ReadSetItem[] {
  const assignment = context.assignment!;
  return [
    {
      sourceId: 'goal',
      revision: goal.revision,
      digest: goal.digest,
      trust: 'trusted',
      claim: 'asserted',
      selectedBy:
        goal.revision === 1 ? "the Task's Goal, as the spec states it" : `the Goal as revised (${goal.revision})`,
      dependsOn: [],
    },
    {
      sourceId: 'task-spec',
      digest: context.specDigest!,
      trust: 'trusted',
      claim: 'asserted',
      selectedBy: 'the stages, artifact contracts and sources',
      dependsOn: [],
    },
    {
      sourceId: 'assignment',
      digest: assignment.digest,
      trust: 'trusted',
      claim: 'asserted',
      selectedBy: `stage ${stage.name} by ${assignment.harness}, generation ${assignment.generation}`,
      dependsOn: ['goal'],
    },
    {
      sourceId: 'workspace',
      digest: workspaceDigest,
      trust: 'untrusted',
      claim: 'verified',
      selectedBy: 'the source tree the provider works on (digest computed by the Host)',
      dependsOn: [],
    },
  ];
}

/** Each source the spec declares, as read now, with the trust the spec gives it. */
function sourceItems({ spec, sources }: ReadSetInput, trust: Map<string, Trust>): ReadSetItem[] {
  return sourcesOf(spec).map((source, i) => {
    const read = sources.get(source.id) ?? null;
    const itemTrust = trust.get(source.id) ?? 'untrusted';
    return {
      sourceId: source.id,
      digest: read?.digest ?? ABSENT,
      trust: itemTrust,
      claim: itemTrust === 'trusted' ? 'asserted' : 'unverified',
      selectedBy: `declared by the spec (sources.${i}${source.description ? `: ${source.description}` : ''})`,
      dependsOn: source.dependsOn,
      location: { in: source.in, path: source.path },
    };
  });
}

/** Each evidence held, by artifact name in order: written by a provider, so untrusted. */
function evidenceItems(context: TaskMachineContext): ReadSetItem[] {
  return Object.keys(context.evidence)
    .sort()
    .map((name) => {
      const held = context.evidence[name]!;
      return {
        sourceId: `evidence:${name}`,
        digest: held.digest,
        trust: 'untrusted',
        claim: 'unverified',
        selectedBy: `${name} written by the provider of generation ${held.generation}; the Host checked its form only`,
        dependsOn: [],
      };
    });
}

/** A decision stage's candidates, each trusted only when every source supporting it is. */
function compiledCandidates(stage: Stage, trust: Map<string, Trust>): CompiledCandidate[] {
  return (stage.decision?.candidates ?? []).map((candidate) => {
    const supportedBy = candidate.supportedBy.map((sourceId) => ({
      sourceId,
      trust: trust.get(sourceId) ?? ('untrusted' as const),
    }));
    const trusted = supportedBy.length > 0 && supportedBy.every((s) => s.trust === 'trusted');
    return {
      id: candidate.id,
      summary: candidate.summary,
      action: candidate.action,
      supportedBy,
      authority: trusted ? 'trusted' : 'untrusted',
    };
  });
}

/** The digest an item binds for a source that was absent when compiled (no bytes hash to it). */
export const ABSENT = `sha256:${'0'.repeat(64)}`;

/**
 * What moved in a Context's read set since it was compiled: the Goal's revision, and each trusted
 * source re-read through `read` (the Task's own objects are immutable; untrusted items carry no
 * authority, so their moving does not invalidate). A trusted item depending on a moved one is
 * stale through it. Without a reader (a TaskActor made without one) only the Goal is checked; the
 * Supervisor always gives one (`kernelSourceReader`). With `observe` (a decision, on a Host whose
 * frontier can observe), the chosen candidate's target is observed again, once per adapter,
 * operation and target; one that cannot be observed now is stale with `current` null.
 * Other events do not re-read observations: the Effect itself moves the target it observed.
 */
export async function staleSources(
  body: ReadSetContext,
  goal: { revision: number },
  read: SourceReader | undefined,
  observe?: { reader: ObservationReader; candidateId: string },
): Promise<StaleSource[]> {
  const stale: StaleSource[] = [];
  const observations = new Map<string, Promise<ObservationValues | null>>();
  for (const item of body.items) {
    if (item.sourceId === 'goal' && item.revision !== goal.revision) {
      stale.push({ sourceId: 'goal', bound: `revision ${item.revision}`, current: `revision ${goal.revision}` });
    } else if (item.observed) {
      // Only the chosen candidate's observation binds its decision; one that cannot be made now has not held.
      if (!observe || item.observed.candidateId !== observe.candidateId) continue;
      const { adapter, operation, target, aspect } = item.observed;
      // Only the target is re-read here. A stale decision reruns its stage, and the rerun would bind
      // a changed endpoint or declaration without anyone deciding to: those are checked before the
      // intent instead, where a change is `effect_endpoint_changed` and the Task waits.
      if (aspect !== 'target') continue;
      const key = JSON.stringify([adapter, operation, target]);
      if (!observations.has(key)) observations.set(key, observe.reader({ adapter, operation, target }));
      const now = await observations.get(key)!;
      const current = now === null ? null : observedDigest(now[aspect]);
      if (current !== item.digest) stale.push({ sourceId: item.sourceId, bound: item.digest, current });
    } else if (item.trust === 'trusted' && item.location && read) {
      const current = await read(item.location);
      const bound = item.digest === ABSENT ? null : item.digest;
      if (current !== bound) stale.push({ sourceId: item.sourceId, bound: bound ?? 'absent', current });
    }
  }
  const moved = new Set(stale.map((s) => s.sourceId));
  // Propagate through dependsOn until nothing more is reached (the spec refuses cycles).
  for (let grew = true; grew;) {
    grew = false;
    for (const item of body.items) {
      if (item.trust !== 'trusted' || moved.has(item.sourceId)) continue;
      const via = item.dependsOn.find((id) => moved.has(id));
      if (via === undefined) continue;
      stale.push({ sourceId: item.sourceId, bound: item.digest, current: item.digest, via });
      moved.add(item.sourceId);
      grew = true;
    }
  }
  return stale;
}
