import { z } from 'zod';
import type { Supervisor, TaskReading } from '../../kernel/index.js';
import { isTaskState, taskGraph } from '../../machines/index.js';
import { taskRequests, taskStory } from '../../views/index.js';
import { CliError } from '../cli-io.js';
import { acceptedOf, acceptedPatch, attemptWorkspace, type TaskRecords } from '../commands/work-back.js';
import { layoutGraph, type GraphLayout } from './graph-layout.js';
import { taskPath } from './task-path.js';
import { sendJson } from './http-io.js';
import { requireTask, route, type AnyRoute } from './route-table.js';

/** The outcome object's fields the page shows (objects/object-kinds.ts `OutcomeObject`). */
const Outcome = z.object({
  attempt: z.number().int(),
  generation: z.number().int(),
  evidence: z.record(z.string(), z.string()),
  sourceDigest: z.string(),
  verification: z.string(),
  result: z.unknown(),
  resultArtifact: z.string().optional(),
});
const Verification = z.object({
  generation: z.number().int(),
  jobId: z.string(),
  exitCode: z.number().int().nullable(),
  passed: z.boolean(),
  frozenTestsIntact: z.boolean(),
});

/** The result artifact as text: a text result as it is, JSON indented, a file result by its digest. */
function resultText(result: unknown, artifact: string | undefined, evidence: Record<string, string>): string {
  if (typeof result === 'string') return result;
  if (result === null || result === undefined)
    return artifact ? `(a file: ${artifact} ${evidence[artifact] ?? ''})`.replace(' )', ')') : '(no result artifact)';
  return JSON.stringify(result, null, 2);
}

/**
 * `GET /tasks/:id/outcome`: a completed Task's outcome (the verification it passed, its result
 * artifact as text, its workspace and the diff from its seed, as `ordivon diff` computes it); for
 * any other Task `outcome: null` and the latest verification, if one ran. A diff that cannot be
 * made (`workspace_changed`, `seed_changed`, `git_failed`) is given as `diff.error` with its code;
 * the outcome is still answered.
 */
export async function taskOutcome(sup: Supervisor, taskId: string, reading: TaskReading) {
  const { view, events, getObject } = reading;
  const object = (digest: string) => getObject(digest).body;
  const latest = view.context.verification;
  const verification = latest
    ? { digest: latest.digest, ...Verification.parse(object(latest.digest)), sourceDigest: latest.sourceDigest }
    : null;
  const outcomeDigest = isTaskState(view.state, 'completed') ? (view.context.outcome?.digest ?? null) : null;
  if (outcomeDigest === null) return { taskId, state: view.state, verification, outcome: null };
  const outcome = Outcome.parse(object(outcomeDigest));
  const records: TaskRecords = { taskId, state: view.state, outcomeDigest, spec: view.spec, events, object };
  const diff = await acceptedOf(sup.root, records)
    .then(acceptedPatch)
    .then(
      (patch) => ({ patch, error: null }),
      (error: unknown) => {
        if (!(error instanceof CliError)) throw error;
        return { patch: null, error: { code: error.code, message: error.message } };
      },
    );
  return {
    taskId,
    state: view.state,
    verification,
    outcome: {
      digest: outcomeDigest,
      attempt: outcome.attempt,
      generation: outcome.generation,
      sourceDigest: outcome.sourceDigest,
      evidence: outcome.evidence,
      resultArtifact: outcome.resultArtifact ?? null,
      resultText: resultText(outcome.result, outcome.resultArtifact, outcome.evidence),
      workspace: await attemptWorkspace(sup.root, taskId, outcome.attempt),
      diff,
    },
  };
}

/** `GET /tasks/:id/story`: the Task's path through the statechart, each run's transcript and cost, and the Task's cost. */
export function storyOf(taskId: string, { events, getObject }: TaskReading) {
  return { taskId, path: taskPath(events), ...taskStory({ events, object: (digest) => getObject(digest).body }) };
}

/**
 * `GET /requests`: every pending DecisionRequest of every Task this Host lists, oldest Task
 * first, each with its Task's id and title: the page's inbox. Only the histories of Tasks whose
 * projection holds a pending request are read.
 */
export async function pendingRequests(sup: Supervisor) {
  const requests = [];
  for (const t of sup.listTasks()) {
    // The projection in memory says whether any is pending; only then is the history read.
    const held = sup.getTask(t.taskId)?.context.requests ?? {};
    if (!Object.values(held).some((r) => r.status === 'pending')) continue;
    const reading = await sup.readTask(t.taskId);
    if (!reading) continue;
    const object = (digest: string) => reading.getObject(digest).body;
    for (const r of taskRequests({ events: reading.events, object }, held))
      if (r.status === 'pending') requests.push({ title: t.title, ...r });
  }
  return { requests };
}

let layout: Promise<GraphLayout> | undefined;
/** `GET /graph/layout`: laid out once per process (the graph is the code's, and ELK takes a second or more). */
export function graphLayout(): Promise<GraphLayout> {
  layout ??= layoutGraph(taskGraph());
  return layout;
}

/**
 * The read routes the page adds to the control API's table (docs/service.md): `GET /graph/layout`,
 * `GET /requests`, `GET /tasks/:id/outcome` and `GET /tasks/:id/story`.
 */
export function pageRoutes(sup: Supervisor): AnyRoute[] {
  return [
    route({
      method: 'GET',
      pattern: '/graph/layout',
      handle: async ({ res }) => sendJson(res, 200, await graphLayout()),
    }),
    route({
      method: 'GET',
      pattern: '/requests',
      handle: async ({ res }) => sendJson(res, 200, await pendingRequests(sup)),
    }),
    route({
      method: 'GET',
      pattern: '/tasks/:id/outcome',
      handle: async ({ res, params: { id } }) =>
        sendJson(res, 200, await taskOutcome(sup, id, await requireTask(sup, id))),
    }),
    route({
      method: 'GET',
      pattern: '/tasks/:id/story',
      handle: async ({ res, params: { id } }) => sendJson(res, 200, storyOf(id, await requireTask(sup, id))),
    }),
  ];
}
