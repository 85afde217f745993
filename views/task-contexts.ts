import { z } from 'zod';
import { RevokedBy, StaleSource, VerificationCause } from '../machines/index.js';
import { ReadSetContext, SourcesContext, type ReadSetItem } from '../objects/index.js';
import type { RefusalCause, TaskContextView, TaskRefusal } from './task-context-view.js';
import { taskRejections, type LatestRejection, type RunSource } from './task-runs.js';
import { revocationOf, type JournalEvent } from '../kernel/requests/request-revocation.js';

export { TaskContextView, RefusalCause, type TaskRefusal } from './task-context-view.js';

// What is read of the journal: stored events are parsed again here (a file read from disk).
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
/** The fields of a refused event that name its causes (each event type carries some of them). */
const RefusedData = z.object({
  contextDigest: z.string().optional(),
  candidateId: z.string().optional(),
  stale: z.array(StaleSource).optional(),
  jobId: z.string().nullable().optional(),
  exitCode: z.number().int().nullable().optional(),
  requestId: z.string().optional(),
  revokedBy: RevokedBy.optional(),
  causes: z.array(VerificationCause).optional(),
});

/** The journal's facts about one Context, before its object is read. */
type Compiled = z.infer<typeof CompileData> & { revision: number };

function contextView(body: unknown, compile: Compiled, assignmentStage: string | undefined): TaskContextView {
  const head = {
    revision: compile.revision,
    generation: compile.generation,
    contextDigest: compile.contextDigest,
    promptDigest: compile.promptDigest ?? null,
  };
  const readSet = ReadSetContext.safeParse(body);
  if (readSet.success) {
    const { stage, goal, items, candidates, grants } = readSet.data;
    return { ...head, stage, goalRevision: goal.revision, format: 'read-set', items, candidates, grants: grants ?? [] };
  }
  // Before read sets a Context named a trust class per source and no claim: the Host's own objects
  // (`host`) are the trusted ones, what the workspace or a provider supplied is untrusted, and every
  // claim shows as `unverified` because none was recorded.
  const old = SourcesContext.parse(body);
  return {
    ...head,
    stage: assignmentStage ?? null,
    goalRevision: null,
    format: 'sources',
    items: old.sources.map((s): ReadSetItem => ({
      sourceId: s.id,
      digest: s.digest,
      trust: s.trust === 'host' ? 'trusted' : 'untrusted',
      claim: 'unverified',
      selectedBy: s.reason,
      dependsOn: [],
    })),
    candidates: [],
    grants: [],
  };
}

/** The journal as `causesOf` needs it. */
interface Seen {
  contexts: TaskContextView[];
  /** Each Context's first admitted decision, by revision. */
  decided: Map<string, number>;
  /** The Task's current Context when each refused event arrived (null: none since the last Assignment). */
  currentAt: Map<number, string | null>;
  /** The whole journal, oldest first. */
  events: JournalEvent[];
}

/**
 * What caused a refusal, for the codes whose causes the journal names: the stale sources the
 * kernel recorded on the event, the chosen candidate's support, the candidates it was not one of,
 * the Context it named against the current one, the action that failed, or what failed a
 * verification. Other codes: undefined.
 */
function causesOf(
  code: string,
  type: string,
  data: z.infer<typeof RefusedData>,
  revision: number,
  seen: Seen,
): RefusalCause[] | undefined {
  const named = seen.contexts.find((c) => c.contextDigest === data.contextDigest);
  const candidateId = data.candidateId ?? '';
  switch (code) {
    case 'context_stale':
      return (data.stale ?? []).map((s) => ({ kind: 'stale', ...s }));
    case 'untrusted_authority': {
      const candidate = named?.candidates.find((k) => k.id === candidateId);
      return (candidate?.supportedBy ?? []).map((s) => ({ kind: 'support', candidateId, ...s }));
    }
    case 'candidate_unknown':
      return [{ kind: 'candidate', candidateId, known: named?.candidates.map((k) => k.id) ?? [] }];
    case 'superseded':
    case 'context_mismatch': {
      const at = data.contextDigest !== undefined ? seen.decided.get(data.contextDigest) : undefined;
      return [
        {
          kind: 'context',
          named: data.contextDigest ?? '',
          current: seen.currentAt.get(revision) ?? null,
          decidedAt: at !== undefined && at < revision ? at : null,
        },
      ];
    }
    case 'decision_revoked': {
      // Written into the answer by the kernel; an answer older than that reads it from the journal.
      const requestId = data.requestId ?? '';
      const by = data.revokedBy ?? revocationOf(seen.events, requestId, revision);
      return by ? [{ kind: 'revoked', requestId, ...by }] : undefined;
    }
    case 'action_failed':
      return type === 'action.record'
        ? [{ kind: 'action', candidateId, jobId: data.jobId ?? null, exitCode: data.exitCode ?? null }]
        : undefined;
    case 'verification_failed':
      return type === 'verification.record' && data.causes ? data.causes : undefined;
    default:
      return undefined;
  }
}

/**
 * Every Context compiled for a Task (oldest first, from its `context.compile` events and the
 * Context objects they name) and every rejection with the causes the journal names. `ordivon show`,
 * the service's Task view and the page read it; a Context written before read sets still shows.
 * Throws (a ZodError) when a stored event or Context does not have the shape it was written with.
 */
export function taskProvenance(
  source: RunSource,
  latest: z.infer<typeof LatestRejection> | null | undefined,
): { contexts: TaskContextView[]; rejections: TaskRefusal[] } {
  const events = [...source.events];
  const stages = new Map<number, string>();
  const seen: Seen = { contexts: [], decided: new Map(), currentAt: new Map(), events };
  let generation = 0;
  // As the statechart does: an Assignment leaves the Task without a Context until one is compiled.
  let current: string | null = null;
  for (const e of events) {
    if (!e.disposition.admitted) {
      seen.currentAt.set(e.revision, current);
      continue;
    }
    if (e.type === 'assignment.commit') {
      const a = AssignmentData.parse(e.data);
      generation = a.generation ?? generation + 1;
      stages.set(generation, a.stage ?? a.purpose);
      current = null;
    } else if (e.type === 'context.compile') {
      const compile = { ...CompileData.parse(e.data), revision: e.revision };
      seen.contexts.push(contextView(source.object(compile.contextDigest), compile, stages.get(compile.generation)));
      current = compile.contextDigest;
    } else if (e.type === 'decision.submit') {
      const digest = RefusedData.parse(e.data).contextDigest;
      if (digest !== undefined && !seen.decided.has(digest)) seen.decided.set(digest, e.revision);
    }
  }
  const byRevision = new Map(events.map((e) => [e.revision, e]));
  const rejections = taskRejections(events, latest).map((r): TaskRefusal => {
    const event = byRevision.get(r.revision)!;
    const causes = causesOf(r.reason, event.type, RefusedData.parse(event.data), r.revision, seen);
    return causes ? { ...r, causes } : r;
  });
  return { contexts: seen.contexts, rejections };
}
