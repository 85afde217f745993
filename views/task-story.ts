import { z } from 'zod';
import { HarnessRunReceipt } from '../drivers/receipt.js';
import type { EventRecord } from '../store/index.js';
import { taskRuns, type TaskRun } from './task-runs.js';

/** A Task's events (oldest first) and a reader of its immutable objects. */
export interface StorySource {
  events: ReadonlyArray<{ revision: number } & Pick<EventRecord, 'type' | 'data' | 'disposition'>>;
  object(digest: string): unknown;
}

/**
 * One entry of a run's transcript, as its receipt and the Host's records hold it. Every `text`
 * came from the provider or the Task's spec: untrusted, to be shown as data.
 */
export type TranscriptEntry =
  | { kind: 'prompt'; from: 'host'; text: string }
  | {
      kind: 'permission';
      from: 'provider';
      /** What it asked to do (`edit`, `execute`, …), as the driver classified it. */
      ask: string;
      text: string;
      command: string | null;
      answer: string;
      reason: string;
    }
  | { kind: 'tools'; from: 'provider'; started: number; completed: number }
  | { kind: 'message'; from: 'provider'; text: string }
  | { kind: 'tool'; from: 'provider'; title: string; status: string | null; output: string | null }
  | { kind: 'omitted'; from: 'provider'; steps: number }
  | { kind: 'artifact'; from: 'provider'; name: string; bytes: number; digest: string }
  | { kind: 'stop'; from: 'provider'; stopReason: string; exitCode: number | null; durationMs: number };

/** Money as a provider reported it (ACP's `usage_update.cost`); null when it reported none. */
export interface ReportedCost {
  amount: number;
  currency: string;
}

/** One run's transcript and what it cost. */
export interface RunStory {
  revision: number;
  generation: number;
  harness: string;
  provider: string;
  confined: boolean | null;
  tokens: TaskRun['tokens'];
  cost: ReportedCost | null;
  transcript: TranscriptEntry[];
}

/** What every run cost together: sums over the runs that reported each figure, and how many did. */
export interface StoryCost {
  runs: number;
  tokensReported: number;
  input: number | null;
  output: number | null;
  total: number | null;
  costReported: number;
  /** Per currency, the sum of the reported costs. */
  amounts: Record<string, number>;
}

/** Each run's transcript and cost, and the Task's cost (`GET /tasks/:id/story` adds the Task's path). */
export interface TaskStory {
  runs: RunStory[];
  cost: StoryCost;
}

const CompileData = z.object({ contextDigest: z.string(), promptDigest: z.string().optional() });
const PromptBody = z.object({ text: z.string() });
const Cost = z.object({ lastUsageUpdate: z.object({ cost: z.object({ amount: z.number(), currency: z.string() }) }) });

/** The prompt each Context was rendered to, by Context digest (none for Contexts compiled before prompts were kept). */
function prompts(source: StorySource): Map<string, string> {
  const out = new Map<string, string>();
  for (const e of source.events) {
    if (e.type !== 'context.compile' || !e.disposition.admitted) continue;
    const data = CompileData.safeParse(e.data).data;
    const text = data?.promptDigest ? PromptBody.safeParse(source.object(data.promptDigest)).data?.text : undefined;
    if (data && text !== undefined) out.set(data.contextDigest, text);
  }
  return out;
}

function transcriptOf(receipt: HarnessRunReceipt, prompt: string | undefined): TranscriptEntry[] {
  const out: TranscriptEntry[] = [];
  if (prompt !== undefined) out.push({ kind: 'prompt', from: 'host', text: prompt });
  for (const p of receipt.permissions ?? [])
    out.push({
      kind: 'permission',
      from: 'provider',
      ask: p.evidence.kind,
      text: p.evidence.title,
      command: p.evidence.command,
      answer: p.answer,
      reason: p.reason,
    });
  const { toolItemsStarted: started, toolItemsCompleted: completed } = receipt.counts;
  if (started > 0 || completed > 0) out.push({ kind: 'tools', from: 'provider', started, completed });
  if (receipt.steps) {
    // What the agent said and did, in order; its final message is the last of these messages.
    for (const step of receipt.steps)
      out.push(
        step.kind === 'message'
          ? { kind: 'message', from: 'provider', text: step.text }
          : { kind: 'tool', from: 'provider', title: step.title, status: step.status, output: step.output },
      );
    if (receipt.stepsOmitted) out.push({ kind: 'omitted', from: 'provider', steps: receipt.stepsOmitted });
  } else if (receipt.finalText?.trim()) out.push({ kind: 'message', from: 'provider', text: receipt.finalText });
  for (const a of receipt.artifacts)
    out.push({ kind: 'artifact', from: 'provider', name: a.name, bytes: a.bytes, digest: a.digest });
  out.push({
    kind: 'stop',
    from: 'provider',
    stopReason: receipt.stopReason,
    exitCode: receipt.exitCode ?? null,
    durationMs: receipt.timings.durationMs,
  });
  return out;
}

const add = (sum: number | null, n: number | null | undefined) => (n == null ? sum : (sum ?? 0) + n);

/**
 * A Task's story beyond its view: what each run was told and answered (as the
 * receipt records it: the prompt, the permission requests and their answers, the tool-call counts,
 * each message and tool call where the protocol reported them (else the final message), the
 * artifacts, the stop), tokens and cost per run where the provider reported
 * them, and their sums.
 */
export function taskStory(source: StorySource): TaskStory {
  const told = prompts(source);
  const runs = taskRuns(source).map((run): RunStory => {
    const receipt = HarnessRunReceipt.parse(source.object(run.receiptDigest));
    return {
      revision: run.revision,
      generation: run.generation,
      harness: run.harness,
      provider: run.provider,
      confined: run.confined,
      tokens: run.tokens,
      cost: Cost.safeParse(receipt.usage).data?.lastUsageUpdate.cost ?? null,
      transcript: transcriptOf(receipt, told.get(receipt.contextDigest)),
    };
  });
  const cost: StoryCost = {
    runs: runs.length,
    tokensReported: 0,
    input: null,
    output: null,
    total: null,
    costReported: 0,
    amounts: {},
  };
  for (const r of runs) {
    if (r.tokens) {
      cost.tokensReported++;
      cost.input = add(cost.input, r.tokens.input);
      cost.output = add(cost.output, r.tokens.output);
      cost.total = add(cost.total, r.tokens.total);
    }
    if (r.cost) {
      cost.costReported++;
      cost.amounts[r.cost.currency] = (cost.amounts[r.cost.currency] ?? 0) + r.cost.amount;
    }
  }
  return { runs, cost };
}
