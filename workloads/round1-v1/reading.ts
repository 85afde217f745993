import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { clientRequestId } from '../../frontier/index.js';
import { LatestRejection, taskRejections, taskRuns, type TaskRejection, type TaskRun } from '../../views/index.js';
import type { Runtime } from '../../runtime/index.js';
import type { EventRecord, EventStore } from '../../store/index.js';

/** sha256 of bytes, as the Host writes digests. */
export const sha = (bytes: Buffer | string) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

const ProjectedTask = z.object({
  state: z.string(),
  snapshot: z.object({
    context: z.object({
      attempt: z.number().int(),
      generation: z.number().int(),
      outcome: z.object({ digest: z.string() }).nullable(),
      lastRejection: LatestRejection.nullable(),
    }),
  }),
});
export const StaleList = z.array(
  z.object({ sourceId: z.string(), bound: z.string(), current: z.string().nullable(), via: z.string().optional() }),
);
const Compiled = z.object({ generation: z.number().int(), contextDigest: z.string(), promptDigest: z.string() });
const ContextBody = z.object({
  stage: z.string(),
  goal: z.object({ revision: z.number().int(), digest: z.string() }),
  items: z.array(z.object({ sourceId: z.string(), digest: z.string(), trust: z.string(), claim: z.string() })),
  candidates: z.array(
    z.object({
      id: z.string(),
      authority: z.string(),
      supportedBy: z.array(z.object({ sourceId: z.string(), trust: z.string() })),
    }),
  ),
});
export type ContextBody = z.infer<typeof ContextBody>;
const ActionRecord = z.object({ generation: z.number().int(), candidateId: z.string(), ok: z.boolean() });
const OutcomeBody = z.object({
  sourceDigest: z.string(),
  evidence: z.record(z.string(), z.string()),
  verification: z.string(),
});
const VerificationBody = z.object({ passed: z.boolean(), frozenTestsIntact: z.boolean() });

/** One Task as the durable state has it: its journal, runs, rejections, Contexts, prompts, jobs and world copy. */
export interface Round1Reading {
  state: string;
  attempt: number;
  generation: number;
  events: Array<{ revision: number } & EventRecord>;
  runs: TaskRun[];
  rejections: TaskRejection[];
  actions: Array<z.infer<typeof ActionRecord>>;
  outcome: (z.infer<typeof OutcomeBody> & { verified: z.infer<typeof VerificationBody> }) | null;
  /** The (last) Context compiled for a generation, and its prompt's text. */
  context(generation: number): ContextBody | undefined;
  prompt(generation: number): string | undefined;
  /** The digest a generation's Context binds for a source. */
  item(generation: number, sourceId: string): string | null;
  /** Runtime jobs under the deterministic request id of a generation's action. */
  actionJobs(generation: number): Promise<number>;
  /** sha256 of a file of the Task's world copy now. */
  worldFile(name: string): string;
}

/** Reads one Task back from a read-only store, the Runtime's job records and its world copy. */
export function readRound1(store: EventStore, runtime: Runtime, taskId: string, world: string): Round1Reading {
  const projected = ProjectedTask.parse(store.projection(taskId));
  const context = projected.snapshot.context;
  const events = [...store.stream(taskId)].map(({ revision, event }) => ({ revision, ...event }));
  const compiled = events.filter((e) => e.type === 'context.compile').map((e) => Compiled.parse(e.data));
  const last = (generation: number) => compiled.filter((c) => c.generation === generation).at(-1);
  const outcome = context.outcome ? OutcomeBody.parse(store.getObject(context.outcome.digest, 'outcome').body) : null;
  const contextOf = (generation: number) => {
    const c = last(generation);
    return c ? ContextBody.parse(store.getObject(c.contextDigest, 'context').body) : undefined;
  };
  return {
    state: projected.state,
    attempt: context.attempt,
    generation: context.generation,
    events,
    runs: taskRuns({ events, object: (digest) => store.getObject(digest, 'receipt').body }),
    rejections: taskRejections(events, context.lastRejection),
    actions: events.filter((e) => e.type === 'action.record').map((e) => ActionRecord.parse(e.data)),
    outcome: outcome && {
      ...outcome,
      verified: VerificationBody.parse(store.getObject(outcome.verification, 'verification').body),
    },
    context: contextOf,
    prompt(generation) {
      const c = last(generation);
      return c ? store.getObject<{ text: string }>(c.promptDigest, 'prompt').body.text : undefined;
    },
    item: (generation, sourceId) => contextOf(generation)?.items.find((i) => i.sourceId === sourceId)?.digest ?? null,
    actionJobs: async (generation) =>
      (await runtime.findJobs({ clientRequestId: clientRequestId(taskId, context.attempt, generation, 'action') }))
        .length,
    worldFile: (name) => sha(readFileSync(join(world, name))),
  };
}

/**
 * Whether `sentence` appears in `prompt` exactly once, inside a data fence labelled with `source`
 * (`<<<data H … source="…" …>>>` … `<<<end data H>>>`): quoted as data, never as instructions.
 */
export function onlyQuotedAsData(prompt: string, source: string, sentence: string): boolean {
  if (prompt.split(sentence).length !== 2) return false;
  const fences = /<<<data ([0-9a-f]{16}) ([^\n]*)>>>\n([\s\S]*?)\n<<<end data \1>>>/g;
  return [...prompt.matchAll(fences)].some(
    (m) => m[2]!.includes(`source="${source}"`) && m[2]!.includes('trust="untrusted"') && m[3]!.includes(sentence),
  );
}
