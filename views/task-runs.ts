import { z } from 'zod';
import { HarnessRunReceipt } from '../drivers/receipt.js';
import { StoredArtifactRefusal } from '../machines/index.js';
import type { EventRecord } from '../store/index.js';

/** A Task's events (oldest first) and a reader of immutable objects: from a store or a running supervisor. */
export interface RunSource {
  events: Iterable<{ revision: number } & Pick<EventRecord, 'type' | 'data' | 'disposition'>>;
  object(digest: string): unknown;
}

/** How a run's final provider text looked. The Host never takes a result from it either way. */
export type FinalTextKind = 'structured' | 'text' | 'none';

/** One provider run of a Task as the Host recorded it: who ran, what they reported, what was kept. */
export interface TaskRun {
  /** Revision of the `run.observe` event that recorded the run. */
  revision: number;
  generation: number;
  harness: string;
  purpose: string;
  clientRequestId: string;
  jobStatus: string;
  driver: string;
  provider: string;
  model: string | null;
  session: string | null;
  stopReason: string;
  /** Whether the provider ran in a sandbox; null for a receipt written before confinement existed. */
  confined: boolean | null;
  messages: number;
  thoughts: number;
  toolItemsStarted: number;
  toolItemsCompleted: number;
  /** Tokens as the provider reported them, normalised across protocols; null when it reported none. */
  tokens: { input: number | null; output: number | null; total: number | null } | null;
  finalText: FinalTextKind;
  /** The first characters of the final text, for display. */
  finalTextSample: string | null;
  /** Artifacts retained as evidence from this run, name → digest (none when the run's result was refused). */
  evidence: Record<string, string>;
  /** The code its result was retained and refused with (`context_stale`, `stale_assignment`, …); null when admitted. */
  refusedAs: string | null;
  /**
   * Artifacts this run wrote that were not retained, name → `{code, detail}`: the code a row of
   * docs/errors.md (`artifact_invalid`, `contract_unknown`, `artifact_changed`, the workspace
   * read's codes). A journal of machine version 4 or before stored the detail alone; it is read
   * with the code its prose names (`legacyRefusalCode`).
   */
  refused: Record<string, { code: string; detail: string }>;
  /** Host-computed source digest when the run ended (artifacts excluded), when recorded. */
  sourceDigest: string | null;
  receiptDigest: string;
}

const Counted = z.object({ inputTokens: z.number(), outputTokens: z.number(), totalTokens: z.number() });
/** The usage shapes the drivers record: Codex `thread/tokenUsage`, ACP prompt response, ACP `usage_update`. */
const Usage = z.union([
  z.object({ total: Counted }),
  z.object({ promptResponse: Counted }),
  z.object({ lastUsageUpdate: z.object({ used: z.number() }) }),
]);

function tokensOf(usage: unknown): TaskRun['tokens'] {
  const parsed = Usage.safeParse(usage);
  if (!parsed.success) return null;
  const u = parsed.data;
  if ('total' in u) return { input: u.total.inputTokens, output: u.total.outputTokens, total: u.total.totalTokens };
  if ('promptResponse' in u)
    return {
      input: u.promptResponse.inputTokens,
      output: u.promptResponse.outputTokens,
      total: u.promptResponse.totalTokens,
    };
  return { input: null, output: null, total: u.lastUsageUpdate.used };
}

/** `structured` when the text is a JSON object, `text` for anything else said, `none` when nothing was. */
export function finalTextKind(text: string | undefined): FinalTextKind {
  if (text === undefined || text.trim() === '') return 'none';
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? 'structured' : 'text';
  } catch {
    return 'text';
  }
}

const ObserveData = z.object({
  generation: z.number().int(),
  clientRequestId: z.string(),
  receiptDigest: z.string(),
  jobStatus: z.string(),
  evidence: z.record(z.string(), z.string()).default({}),
  refused: z.record(z.string(), StoredArtifactRefusal).default({}),
  sourceDigest: z.string().optional(),
});
const AssignmentData = z.object({ generation: z.number().int().optional(), harness: z.string(), purpose: z.string() });

/**
 * Every provider run recorded in a Task's stream, oldest first, with its receipt (parsed again:
 * what comes back from disk is a boundary too). `ordivon show`, the service and the demo use it.
 */
export function taskRuns(source: RunSource): TaskRun[] {
  const assignments = new Map<number, { harness: string; purpose: string }>();
  const runs: TaskRun[] = [];
  let generation = 0;
  for (const event of source.events) {
    if (event.type === 'assignment.commit' && event.disposition.admitted) {
      const a = AssignmentData.parse(event.data);
      generation = a.generation ?? generation + 1;
      assignments.set(generation, { harness: a.harness, purpose: a.purpose });
    }
    if (event.type === 'run.observe')
      runs.push(runOf(source, event.revision, event.data, assignments, event.disposition));
  }
  return runs;
}

function runOf(
  source: RunSource,
  revision: number,
  raw: unknown,
  assignments: Map<number, { harness: string; purpose: string }>,
  disposition: EventRecord['disposition'],
): TaskRun {
  const data = ObserveData.parse(raw);
  const refusedAs = disposition.admitted ? null : disposition.code;
  const receipt = HarnessRunReceipt.parse(source.object(data.receiptDigest));
  const assignment = assignments.get(data.generation);
  return {
    revision,
    generation: data.generation,
    harness: assignment?.harness ?? '?',
    purpose: assignment?.purpose ?? '?',
    clientRequestId: data.clientRequestId,
    jobStatus: data.jobStatus,
    driver: receipt.driver,
    provider: `${receipt.provider.name}${receipt.provider.version ? ` ${receipt.provider.version}` : ''}`,
    model: receipt.model ?? null,
    session: receipt.threadId ?? receipt.sessionId ?? null,
    stopReason: receipt.stopReason,
    confined: receipt.confined ?? null,
    messages: receipt.counts.messages,
    thoughts: receipt.counts.thoughts,
    toolItemsStarted: receipt.counts.toolItemsStarted,
    toolItemsCompleted: receipt.counts.toolItemsCompleted,
    tokens: tokensOf(receipt.usage),
    finalText: finalTextKind(receipt.finalText),
    finalTextSample: receipt.finalText?.trim() ? receipt.finalText.trim().slice(0, 80) : null,
    // A refused result's artifacts were written with it but never held as evidence.
    evidence: refusedAs === null ? data.evidence : {},
    refusedAs,
    refused: data.refused,
    sourceDigest: data.sourceDigest ?? null,
    receiptDigest: data.receiptDigest,
  };
}

/** One event the statechart retained and rejected, as the journal records it. */
export interface TaskRejection {
  revision: number;
  /** The event's type. */
  event: string;
  /** Its disposition's code. */
  reason: string;
  /** The generation it named; for the latest rejection, the one the statechart recorded. Null when neither says. */
  generation: number | null;
  /** What was missing or mismatched: kept for the latest rejection only (the Task's `lastRejection`). */
  detail?: string;
}

/** What `taskRejections` reads of a stored context's `lastRejection` (parse a projection's with it). */
export const LatestRejection = z.object({
  revision: z.number().int(),
  generation: z.number().int(),
  detail: z.string().optional(),
});

/**
 * A Task's rejections, oldest first, from its journal: every event whose disposition is not
 * admitted. The Task's context counts them (`rejected`) and keeps the latest with its detail
 * (`lastRejection`), which fills in that one; a stored projection of machine version 1 has no
 * `lastRejection`, and its rejections read the same from the journal.
 */
export function taskRejections(
  events: RunSource['events'],
  latest: z.infer<typeof LatestRejection> | null | undefined,
): TaskRejection[] {
  const out: TaskRejection[] = [];
  for (const e of events) {
    if (e.disposition.admitted) continue;
    const named = e.data['generation'];
    const rejection: TaskRejection = {
      revision: e.revision,
      event: e.type,
      reason: e.disposition.code,
      generation: typeof named === 'number' ? named : null,
    };
    if (latest && latest.revision === e.revision) {
      rejection.generation = latest.generation;
      if (latest.detail !== undefined) rejection.detail = latest.detail;
    }
    out.push(rejection);
  }
  return out;
}
