import { z } from 'zod';
import { RefusalCause, TaskContextView, GrantView, TaskRequestView } from '../../views/index.js';
import { StoredArtifactRefusal } from '../../machines/index.js';
import { answer, call, refused } from './cli-route.js';
import type { ServiceFile } from './service-file.js';
import { QueuedView } from './queued-view.js';

// Apart from cli-route.ts: the view's schema loads the Context and request schemas, which `list`,
// `send` and `decide` do not need.

/**
 * A Task view as `ordivon show` prints it, whether built from the store or answered by a running
 * service: what the human form reads is checked, anything else is kept for `--json`.
 */
export const ShowView = z.looseObject({
  taskId: z.string(),
  revision: z.number().int(),
  state: z.string(),
  frontier: z.string(),
  title: z.string(),
  /** Set while the Task's dispatch waits for a run slot (null otherwise; absent from older services). */
  queued: QueuedView.nullable().optional(),
  context: z.looseObject({
    generation: z.number().int(),
    assignment: z.looseObject({ harness: z.string(), purpose: z.string(), generation: z.number().int() }).nullable(),
    evidence: z.record(z.string(), z.unknown()),
  }),
  rejections: z.array(
    z.looseObject({
      revision: z.number().int(),
      event: z.string(),
      code: z.string(),
      generation: z.number().int().nullable(),
      detail: z.string().optional(),
      causes: z.array(RefusalCause).optional(),
    }),
  ),
  /** Every Context compiled for the Task, oldest first, with its items and candidates. */
  contexts: z.array(TaskContextView),
  runs: z.array(
    z.looseObject({
      revision: z.number().int(),
      generation: z.number().int(),
      purpose: z.string(),
      harness: z.string(),
      driver: z.string(),
      provider: z.string(),
      jobStatus: z.string(),
      stopReason: z.string(),
      /** Whether the provider ran in a sandbox (null: a receipt older than confinement; absent: an older service). */
      confined: z.boolean().nullable().optional(),
      messages: z.number(),
      toolItemsStarted: z.number(),
      toolItemsCompleted: z.number(),
      finalText: z.string(),
      evidence: z.record(z.string(), z.string()),
      /** The code the run's result was refused with (absent from services older than it). */
      refusedAs: z.string().nullable().optional(),
      /** `{code, detail}` per artifact (a service older than machine version 5 answers the detail alone). */
      refused: z.record(z.string(), StoredArtifactRefusal),
    }),
  ),
  /** Every Effect receipt with its evidence files (absent from services older than them). */
  effects: z
    .array(
      z.looseObject({
        revision: z.number().int(),
        event: z.string(),
        requestId: z.string(),
        receiptDigest: z.string(),
        via: z.string(),
        evidence: z.array(
          z.looseObject({ name: z.string(), mediaType: z.string(), digest: z.string(), bytes: z.number() }),
        ),
      }),
    )
    .optional(),
  /** The permission grants the Task's next Context will record (absent from services older than it). */
  grants: z.array(GrantView).optional(),
  /** Every DecisionRequest (absent from services older than them). */
  requests: z.array(TaskRequestView).optional(),
  /** A branch stage's children and join (absent from services older than it; null without one). */
  branch: z
    .looseObject({
      branchId: z.string(),
      kind: z.string(),
      join: z.string(),
      joined: z.boolean(),
      winners: z.array(z.string()),
      reason: z.string().nullable(),
      children: z.array(
        z.looseObject({
          taskId: z.string(),
          harness: z.string(),
          item: z.string().nullable(),
          state: z.string(),
          generation: z.number().int().nullable(),
          outcome: z.string(),
          verified: z.boolean(),
          why: z.string(),
        }),
      ),
    })
    .nullable()
    .optional(),
  events: z
    .array(
      z.looseObject({
        revision: z.number().int(),
        at: z.string(),
        origin: z.string(),
        type: z.string(),
        disposition: z.looseObject({ admitted: z.boolean(), code: z.string().optional() }),
      }),
    )
    .optional(),
});
export type ShowView = z.infer<typeof ShowView>;

/**
 * Parses a Task view: a service's answer to `GET /tasks/:id` (a bad one is `service_error`) or one
 * built from a stored projection (`record_corrupt`); the error names the field.
 */
export function parseShowView(body: unknown, from: 'service' | 'store'): ShowView {
  return from === 'service'
    ? answer(ShowView, body, 'the service answered a Task view')
    : answer(ShowView, body, 'the stored projection gives a Task view', 'record_corrupt');
}

/** `show` through the service: the view `ordivon show --json` prints. */
export async function showViaService(info: ServiceFile, taskId: string, events: boolean): Promise<ShowView> {
  const res = await call(info, 'GET', `/tasks/${encodeURIComponent(taskId)}${events ? '?events=1' : ''}`);
  if (res.status !== 200) throw refused(res);
  return parseShowView(res.body, 'service');
}
