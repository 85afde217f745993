import { z } from 'zod';
import { taskRejections, type LatestRejection, type RunSource, type TaskRejection } from './task-runs.js';

const Trust = z.enum(['trusted', 'untrusted']);
const Claim = z.enum(['asserted', 'unverified', 'verified']);

/** One item of a compiled Context as `show` and the page list it. */
export const ContextItemView = z.object({
  sourceId: z.string(),
  /** The Goal's revision (goal item only). */
  revision: z.number().int().nullable(),
  digest: z.string(),
  trust: Trust,
  claim: Claim,
  selectedBy: z.string(),
  dependsOn: z.array(z.string()),
  /** Where admission re-reads it (spec sources only). */
  location: z.object({ in: z.string(), path: z.string() }).nullable(),
});
export type ContextItemView = z.infer<typeof ContextItemView>;

/** A candidate of a decision stage's Context: what supports it, with each source's trust. */
export const CandidateView = z.object({
  id: z.string(),
  summary: z.string(),
  authority: Trust,
  supportedBy: z.array(z.object({ sourceId: z.string(), trust: Trust })),
  /** The action the Host would perform, in words (`none`, or the command line). */
  action: z.string(),
});
export type CandidateView = z.infer<typeof CandidateView>;

/** One Context compiled for a Task: one per `context.compile` event. */
export const TaskContextView = z.object({
  /** Revision of the `context.compile` event. */
  revision: z.number().int(),
  generation: z.number().int(),
  /** The stage it was compiled for (for a Context written before read sets: its Assignment's stage or purpose). */
  stage: z.string().nullable(),
  contextDigest: z.string(),
  promptDigest: z.string().nullable(),
  goalRevision: z.number().int().nullable(),
  /** `read-set`: items with trust and claim as compiled; `sources`: written before read sets, mapped (see below). */
  format: z.enum(['read-set', 'sources']),
  items: z.array(ContextItemView),
  candidates: z.array(CandidateView),
});
export type TaskContextView = z.infer<typeof TaskContextView>;

/** What made the Host refuse an event, read from the event and the Contexts it names. */
export const RefusalCause = z.discriminatedUnion('kind', [
  /** `context_stale`: a trusted item (or what it depends on, `via`) moved; current null: it is gone. */
  z.object({
    kind: z.literal('stale'),
    sourceId: z.string(),
    bound: z.string(),
    current: z.string().nullable(),
    via: z.string().optional(),
  }),
  /** `untrusted_authority`: a source supporting the chosen candidate, with its trust. */
  z.object({ kind: z.literal('support'), candidateId: z.string(), sourceId: z.string(), trust: Trust }),
  /** `candidate_unknown`: the id chosen and the candidates the named Context has. */
  z.object({ kind: z.literal('candidate'), candidateId: z.string(), known: z.array(z.string()) }),
  /**
   * `superseded` / `context_mismatch`: the Context the event named and the Task's current one when
   * it arrived; `decidedAt`: the revision of the admitted decision that already used the named one.
   */
  z.object({
    kind: z.literal('context'),
    named: z.string(),
    current: z.string().nullable(),
    decidedAt: z.number().int().nullable(),
  }),
]);
export type RefusalCause = z.infer<typeof RefusalCause>;

/** A rejection with what caused it, for the codes whose causes the journal names. */
export type TaskRefusal = TaskRejection & { causes?: RefusalCause[] };

// ---- what is read from disk (parsed again: a stored body or event is a boundary) ----------------

const Action = z.looseObject({
  kind: z.string(),
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
});
/** A Context compiled as a read set (issue 18 on). */
const ReadSetBody = z.object({
  stage: z.string(),
  goal: z.object({ revision: z.number().int(), digest: z.string() }),
  items: z.array(
    z.object({
      sourceId: z.string(),
      revision: z.number().int().optional(),
      digest: z.string(),
      trust: Trust,
      claim: Claim,
      selectedBy: z.string(),
      dependsOn: z.array(z.string()),
      location: z.object({ in: z.string(), path: z.string() }).optional(),
    }),
  ),
  candidates: z.array(
    z.object({
      id: z.string(),
      summary: z.string().default(''),
      action: Action,
      supportedBy: z.array(z.object({ sourceId: z.string(), trust: Trust })),
      authority: Trust,
    }),
  ),
});
/** A Context written before read sets: sources with a trust class and a reason. */
const SourcesBody = z.object({
  sources: z.array(
    z.object({
      id: z.string(),
      digest: z.string(),
      trust: z.enum(['host', 'evidence', 'workspace', 'provider']),
      reason: z.string(),
    }),
  ),
});
const CompileData = z.object({
  generation: z.number().int(),
  contextDigest: z.string(),
  promptDigest: z.string().optional(),
});
/** `generation` is absent in the oldest journals: then it is the previous one + 1 (as `taskRuns` counts). */
const AssignmentData = z.object({
  generation: z.number().int().optional(),
  purpose: z.string(),
  stage: z.string().optional(),
});
const StaleEntry = z.object({
  sourceId: z.string(),
  bound: z.string(),
  current: z.string().nullable(),
  via: z.string().optional(),
});
/** The fields of a refused event that name its causes (each event type carries some of them). */
const RefusedData = z.object({
  contextDigest: z.string().optional(),
  candidateId: z.string().optional(),
  stale: z.array(StaleEntry).optional(),
});

function describeAction(action: z.infer<typeof Action>): string {
  if (action.kind === 'none') return 'none';
  if (action.kind === 'command' && action.command) return [action.command, ...(action.args ?? [])].join(' ');
  return action.kind;
}

function contextView(
  body: unknown,
  compile: z.infer<typeof CompileData> & { revision: number },
  assignmentStage: string | undefined,
): TaskContextView {
  const head = {
    revision: compile.revision,
    generation: compile.generation,
    contextDigest: compile.contextDigest,
    promptDigest: compile.promptDigest ?? null,
  };
  const readSet = ReadSetBody.safeParse(body);
  if (readSet.success) {
    const c = readSet.data;
    return {
      ...head,
      stage: c.stage,
      goalRevision: c.goal.revision,
      format: 'read-set',
      items: c.items.map((i) => ({
        ...i,
        revision: i.revision ?? null,
        location: i.location ?? null,
      })),
      candidates: c.candidates.map((k) => ({
        id: k.id,
        summary: k.summary,
        authority: k.authority,
        supportedBy: k.supportedBy,
        action: describeAction(k.action),
      })),
    };
  }
  // Before read sets a Context named a trust class per source and no claim: the Host's own objects
  // (`host`) are the trusted ones, everything a provider or the workspace supplied is untrusted, and
  // the claim shows as `unverified` because none was recorded.
  const old = SourcesBody.parse(body);
  return {
    ...head,
    stage: assignmentStage ?? null,
    goalRevision: null,
    format: 'sources',
    items: old.sources.map((s) => ({
      sourceId: s.id,
      revision: null,
      digest: s.digest,
      trust: s.trust === 'host' ? 'trusted' : 'untrusted',
      claim: 'unverified',
      selectedBy: s.reason,
      dependsOn: [],
      location: null,
    })),
    candidates: [],
  };
}

/**
 * What caused a refusal, for the codes whose causes the journal names: the stale sources the
 * kernel recorded on the event, the chosen candidate's support, the candidates it was not one of,
 * or the Context it named against the current one. Other codes have no `causes`.
 */
function causesOf(
  code: string,
  data: z.infer<typeof RefusedData>,
  revision: number,
  contexts: TaskContextView[],
  decided: Map<string, number>,
): RefusalCause[] | undefined {
  const named = data.contextDigest ? contexts.find((c) => c.contextDigest === data.contextDigest) : undefined;
  switch (code) {
    case 'context_stale':
      return (data.stale ?? []).map((s) => ({ kind: 'stale', ...s }));
    case 'untrusted_authority': {
      const candidate = named?.candidates.find((k) => k.id === data.candidateId);
      return (candidate?.supportedBy ?? []).map((s) => ({ kind: 'support', candidateId: candidate!.id, ...s }));
    }
    case 'candidate_unknown':
      return [
        { kind: 'candidate', candidateId: data.candidateId ?? '', known: named?.candidates.map((k) => k.id) ?? [] },
      ];
    case 'superseded':
    case 'context_mismatch': {
      const current = contexts.filter((c) => c.revision < revision).at(-1);
      const at = data.contextDigest !== undefined ? decided.get(data.contextDigest) : undefined;
      return [
        {
          kind: 'context',
          named: data.contextDigest ?? '',
          current: current?.contextDigest ?? null,
          decidedAt: at !== undefined && at < revision ? at : null,
        },
      ];
    }
    default:
      return undefined;
  }
}

/**
 * Every Context compiled for a Task (oldest first, from its `context.compile` events and the
 * Context objects they name) and every rejection with the causes the journal names. `ordivon show`,
 * the service's Task view and the page read it; a Context written before read sets still shows.
 */
export function taskProvenance(
  source: RunSource,
  latest: z.infer<typeof LatestRejection> | null | undefined,
): { contexts: TaskContextView[]; rejections: TaskRefusal[] } {
  const events = [...source.events];
  const stages = new Map<number, string>();
  const contexts: TaskContextView[] = [];
  const decided = new Map<string, number>();
  let generation = 0;
  for (const e of events) {
    if (!e.disposition.admitted) continue;
    if (e.type === 'assignment.commit') {
      const a = AssignmentData.parse(e.data);
      generation = a.generation ?? generation + 1;
      stages.set(generation, a.stage ?? a.purpose);
    } else if (e.type === 'context.compile') {
      const compile = { ...CompileData.parse(e.data), revision: e.revision };
      contexts.push(contextView(source.object(compile.contextDigest), compile, stages.get(compile.generation)));
    } else if (e.type === 'decision.submit') {
      const digest = RefusedData.parse(e.data).contextDigest;
      if (digest !== undefined && !decided.has(digest)) decided.set(digest, e.revision);
    }
  }
  const byRevision = new Map(events.map((e) => [e.revision, e]));
  const rejections = taskRejections(events, latest).map((r): TaskRefusal => {
    const data = RefusedData.parse(byRevision.get(r.revision)!.data);
    const causes = causesOf(r.reason, data, r.revision, contexts, decided);
    return causes ? { ...r, causes } : r;
  });
  return { contexts, rejections };
}
