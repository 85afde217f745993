import {
  TASK_EVENTS,
  type AdmissionFact,
  type RevokedBy,
  type StaleSource,
  type TaskMachineContext,
  type TaskEventType,
} from '../machines/index.js';
import { DecisionRequestObject, type CandidateAction, type TaskSpec } from '../objects/index.js';
import type { EventStore } from '../store/index.js';
import type { EventInput, Refusal } from './event-input.js';
import { contextOf } from './compiled-contexts.js';
import { staleSources, type ObservationReader, type SourceReader } from '../readsets/index.js';
import { revocationOf } from './requests/request-revocation.js';
import { resolveStage } from './stages.js';

/**
 * What the kernel establishes about a sent event before the statechart takes it, the fields of
 * the facts its catalog entry names (machines/event-definition.ts `ADMISSION_FACTS`): what moved
 * in its Context's read set, for a decision whether the Context is this Task's, its generation and
 * the chosen candidate's authority, for an answer the Host's clock and the request's verdict, for
 * an Assignment its generation and stage. They are written into the event, so the statechart's
 * guards read only event data and a replay decides as the first admission did. A field is present
 * only where it applies (`stale` only when something moved), so events keep the shape they had.
 */
export interface AdmissionFacts {
  stale?: StaleSource[];
  known?: boolean;
  generation?: number;
  authority?: 'trusted' | 'untrusted' | null;
  /** Whether the chosen candidate's stage puts it to a person for lack of trusted authority (a decision). */
  ask?: boolean;
  /** The chosen candidate's action kind (a decision). */
  action?: CandidateAction['kind'] | null;
  /** The Host's clock, epoch ms (an answer: expiry is decided on it). */
  now?: number;
  /** Whether the answer is one the request takes (an answer). */
  allowed?: boolean;
  /** What revoked the request an answer names, found in the journal (a revoked request). */
  revokedBy?: RevokedBy;
  /** The Host's harnesses, when an Assignment names none of them (written into the event: it is retained, `harness_unknown`). */
  harnesses?: string[];
  /** The spec's stage an Assignment runs, and its purpose. */
  stage?: string;
  purpose?: string;
  /** The Goal revision a `goal.revise` creates. */
  goalRevision?: number;
  /** The Context a proposal was made against. */
  contextDigest?: string;
}

/** Where an event's facts are found: the Task's store, spec and committed context, the Host's clock, harnesses and readers. */
export interface AdmissionScope {
  store: EventStore;
  taskId: string;
  context: TaskMachineContext;
  /** Reads the world; without it only the Goal is re-validated. */
  read: SourceReader | undefined;
  /** The Host's clock, epoch ms. */
  now: number;
  harnesses?: readonly string[] | undefined;
  /** Re-reads the chosen candidate's Effect observation when a decision is admitted. */
  observe?: ObservationReader | undefined;
  /** The Task's spec, which an Assignment's stage must name (absent for a bare kernel: not checked). */
  spec?: TaskSpec | undefined;
}

/** The sent fields the facts read; each fact reads those of the event types whose entries name it. */
interface Admitting {
  type: TaskEventType;
  generation?: number | undefined;
  harness?: string | undefined;
  stage?: string | undefined;
  purpose?: string | undefined;
  goalRevision?: number | undefined;
  contextDigest?: string | null | undefined;
  candidateId?: string | undefined;
  requestId?: string | undefined;
  answer?: string | undefined;
}

type Found = AdmissionFacts | { refusal: Refusal };

/** How the kernel gathers each fact kind, for whichever event's entry names it. */
const GATHER: { readonly [K in AdmissionFact]: (event: Admitting, scope: AdmissionScope) => Found | Promise<Found> } = {
  'next-generation': ({ generation: sent }, { context }) => {
    const generation = sent ?? context.generation + 1;
    if (generation === context.generation + 1) return { generation };
    return {
      refusal: {
        code: 'generation_mismatch',
        detail: `the next generation is ${context.generation + 1}, not ${generation}`,
        path: 'generation',
      },
    };
  },
  stage: (event, { spec }) => {
    const resolved = resolveStage(spec, event);
    if ('refusal' in resolved) return resolved;
    return resolved.stage === undefined ? { purpose: resolved.purpose } : resolved;
  },
  // `a+b+c` names parallel Attempts (docs/branch-and-join.md): each must be known.
  harnesses: ({ harness }, { harnesses }) =>
    harnesses &&
    needed(harness, 'harness')
      .split('+')
      .some((name) => !harnesses.includes(name))
      ? { harnesses: [...harnesses] }
      : {},
  'next-goal-revision': ({ goalRevision: sent }, { context }) => {
    const goalRevision = sent ?? context.goal.revision + 1;
    if (goalRevision === context.goal.revision + 1) return { goalRevision };
    return {
      refusal: {
        code: 'goal_revision_mismatch',
        detail: `the next Goal revision is ${context.goal.revision + 1}, not ${goalRevision}`,
        path: 'goalRevision',
      },
    };
  },
  'named-context': ({ contextDigest }, { context }) => ({
    contextDigest: contextDigest ?? context.contextDigest ?? 'none',
  }),
  'read-set': readSetFacts,
  decision: decisionFacts,
  answer: answerFacts,
};

/** The fact kinds the kernel knows how to gather (every kind the catalog may name). */
export const GATHERED_FACTS: readonly AdmissionFact[] = Object.keys(GATHER) as AdmissionFact[];

const FACTS_OF: ReadonlyMap<string, readonly AdmissionFact[]> = new Map(
  TASK_EVENTS.map((definition) => [definition.type, definition.admission.facts]),
);

/**
 * Gathers the facts the catalog names for `input`'s type, in their order, each seeing what was
 * sent with the facts before it: its fields, or the first refusal (nothing is written; the facts
 * after it are not gathered, so a refused event reads no world).
 */
export async function admissionFacts(
  input: EventInput,
  scope: AdmissionScope,
): Promise<{ facts: AdmissionFacts } | { refusal: Refusal }> {
  let facts: AdmissionFacts = {};
  for (const kind of FACTS_OF.get(input.type) ?? []) {
    const found = await GATHER[kind]({ ...input, ...facts } as Admitting, scope);
    if ('refusal' in found) return found;
    facts = { ...facts, ...found };
  }
  return { facts };
}

/** A field the fact needs; its absence is a catalog entry naming the fact for an event without it. */
function needed<T>(value: T | undefined, field: string): T {
  if (value === undefined) throw new Error(`admission fact needs the event's ${field}`);
  return value;
}

/** The `stale` fact: present only when something moved (an event without it re-validated clean, or had no read set). */
function staleFact(stale: StaleSource[]): { stale?: StaleSource[] } {
  return stale.length > 0 ? { stale } : {};
}

/**
 * Re-validates the read set of the Context the event names (else the current one), when it is the
 * current one: an event naming another Context is the statechart's to reject. Reads the world
 * through `read` (the Host's effects know where the workspace and the world are); without it only
 * the Goal.
 */
async function readSetFacts(event: Admitting, { store, taskId, context, read }: AdmissionScope): Promise<Found> {
  const named = event.contextDigest || context.contextDigest;
  const current = named !== null && named === context.contextDigest;
  const readSet = current ? contextOf(store, taskId, named)?.readSet : undefined;
  return staleFact(readSet ? await staleSources(readSet, context.goal, read) : []);
}

/**
 * A decision: whether the Context it names is this Task's, that Context's generation, the chosen
 * candidate's authority and action and, when the Context is the current one, what moved in its
 * read set (the candidate's Effect observation re-read through `observe`).
 */
async function decisionFacts(event: Admitting, scope: AdmissionScope): Promise<Found> {
  const { store, taskId, context, read, observe } = scope;
  const contextDigest = needed(event.contextDigest ?? undefined, 'contextDigest');
  const compiled = contextOf(store, taskId, contextDigest);
  if (!compiled) return { generation: 0, known: false, authority: null, action: null };
  const candidate = compiled.readSet?.candidates.find((c) => c.id === event.candidateId);
  const observing = observe && candidate ? { reader: observe, candidateId: candidate.id } : undefined;
  const current = contextDigest === context.contextDigest;
  const stale =
    current && candidate && compiled.readSet ? await staleSources(compiled.readSet, context.goal, read, observing) : [];
  return {
    generation: compiled.generation,
    known: true,
    authority: candidate?.authority ?? null,
    action: candidate?.action.kind ?? null,
    // Written only where it applies, so decisions on other stages keep the shape they had.
    ...(candidate?.authority === 'untrusted' && compiled.readSet?.untrustedAuthority === 'ask' ? { ask: true } : {}),
    ...staleFact(stale),
  };
}

/**
 * An answer to a DecisionRequest: the Host's clock, whether the request takes the answer, and
 * what moved in the world the request is bound to (the read set of its Context, re-read). An
 * answer naming no request of this Task gets the clock alone (the statechart refuses it).
 */
async function answerFacts(event: Admitting, { store, taskId, context, read, now }: AdmissionScope): Promise<Found> {
  const requestId = needed(event.requestId, 'requestId');
  const held = Object.hasOwn(context.requests, requestId) ? context.requests[requestId] : undefined;
  if (!held) return { now, allowed: false };
  const request = DecisionRequestObject.parse(store.getObject(held.digest, 'decision-request').body);
  const allowed = request.allowed.includes(needed(event.answer, 'answer'));
  // Only a pending request bound to the current Context is re-read: any other is refused on its status.
  const readSet =
    held.status === 'pending' && held.contextDigest !== null && held.contextDigest === context.contextDigest
      ? contextOf(store, taskId, held.contextDigest)?.readSet
      : undefined;
  const facts: AdmissionFacts = {
    now,
    allowed,
    ...staleFact(readSet ? await staleSources(readSet, context.goal, read) : []),
  };
  if (held.status === 'revoked') {
    const journal = (function* () {
      for (const { revision, event } of store.stream(taskId)) yield { revision, ...event };
    })();
    const revokedBy = revocationOf(journal, requestId);
    if (revokedBy) facts.revokedBy = revokedBy;
  }
  return facts;
}
