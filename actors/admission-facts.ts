import type { StaleSource, TaskContext } from '../machines/index.js';
import type { EventStore } from '../store/index.js';
import type { EventInput } from './event-input.js';
import { contextOf, staleSources, type SourceReader } from './read-set.js';

/**
 * What the kernel establishes about an event made against a Context before the statechart takes
 * it: what moved in that Context's read set and, for a decision, whether the Context is this
 * Task's, its generation and the chosen candidate's authority. They are written into the event, so
 * the statechart's guards read only event data and a replay decides as the first admission did.
 */
export interface AdmissionFacts {
  stale: StaleSource[];
  known?: boolean;
  generation?: number;
  authority?: 'trusted' | 'untrusted' | null;
}

/** Events whose admission depends on the Context they were made against. */
const READ_SET_EVENTS: ReadonlySet<string> = new Set([
  'run.observe',
  'completion.propose',
  'verification.record',
  'decision.submit',
]);

/**
 * Re-validates the read set of the Context `input` was made against, when it is the current one
 * (an event naming another Context is the statechart's to reject). Reads the world through `read`
 * (the Host's effects know where the workspace and the world are); without it only the Goal.
 */
export async function admissionFacts(
  store: EventStore,
  taskId: string,
  context: TaskContext,
  input: EventInput,
  read: SourceReader | undefined,
): Promise<AdmissionFacts | undefined> {
  if (!READ_SET_EVENTS.has(input.type)) return undefined;
  const named = ('contextDigest' in input && input.contextDigest) || context.contextDigest;
  const current = named !== null && named === context.contextDigest;
  if (input.type !== 'decision.submit') {
    const readSet = current ? contextOf(store, taskId, named)?.readSet : undefined;
    return { stale: readSet ? await staleSources(readSet, context.goal, read) : [] };
  }
  const compiled = contextOf(store, taskId, input.contextDigest);
  if (!compiled) return { stale: [], known: false, generation: 0, authority: null };
  const candidate = compiled.readSet?.candidates.find((c) => c.id === input.candidateId);
  const stale =
    current && candidate && compiled.readSet ? await staleSources(compiled.readSet, context.goal, read) : [];
  return { stale, known: true, generation: compiled.generation, authority: candidate?.authority ?? null };
}
