import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { ConversationItem } from './conversation.js';

/**
 * Loop v0's bounded history. Before each model call, when the request would pass the run's
 * `historyChars`, the conversation is compacted by one stated rule, down to `COMPACT_TO` of the
 * bound so that compactions are rare (each one changes the conversation's prefix, which a
 * provider's prompt cache is keyed on):
 *
 * 1. tool results the model has already answered (all but the latest turn's) are replaced,
 *    oldest first, by a stub naming the tool, the call, the output's size and its sha256 digest
 *    (the output itself stays in the loop's log: a claim check);
 * 2. if that is not enough, the oldest whole turns after the first message (an answer with its
 *    tool calls and their results, or an operator's message) are left out, one at a time, and one
 *    note in their place says how many.
 *
 * The first message (the Host's compiled Context), the system prompt, the tools and the latest
 * turn (the answer the model gave last and the results it has not seen) are never compacted, so
 * a request may still pass the bound by them alone. A compaction is decided once, recorded in the
 * log (`t: 'compact'`, with the stubs and the note as they were sent) before the model call, and
 * replayed as recorded, so a resumed run sends the conversation the first one would have.
 */

/** A compaction brings the request down to this share of the bound. */
export const COMPACT_TO = 0.75;

/** How much of a stubbed output's start its stub quotes. */
const STUB_HEAD_CHARS = 200;

const count = () => z.number().int().nonnegative();

/** One tool result replaced by its stub. */
export const Stubbed = z.strictObject({
  /** Its index in the whole conversation (0 is the Context); ids are the model's and need not be unique. */
  item: count(),
  callId: z.string(),
  name: z.string(),
  outputChars: count(),
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  /** What the model is shown instead, as it was sent. */
  stub: z.string(),
});
export type Stubbed = z.infer<typeof Stubbed>;

/** The oldest items after the Context left out (all of them so far, not only this compaction's), and the note said in their place. */
export const Omitted = z.strictObject({ items: count(), turns: count(), note: z.string() });
export type Omitted = z.infer<typeof Omitted>;

/** What one compaction did, as the log records it: sizes are characters of the request body. */
export const Compaction = z.strictObject({
  /** The model turn it was made before. */
  turn: count(),
  bound: count(),
  charsBefore: count(),
  charsAfter: count(),
  stubbed: z.array(Stubbed),
  /** Present when this compaction left (more) turns out. */
  omitted: Omitted.optional(),
});
export type Compaction = z.infer<typeof Compaction>;

/** The conversation as the loop keeps it: every item (stubs in place), and what is left out. */
export interface History {
  /** Every item so far; 0 is the Host's Context. */
  items: ConversationItem[];
  /** The indexes of the results already stubbed. */
  stubbed: Set<number>;
  omitted: Omitted | undefined;
}

/** The items a model call sends: the Context, the note for what is left out, then the rest. */
export function sentItems(history: History): ConversationItem[] {
  const { items, omitted } = history;
  const note: ConversationItem[] = omitted ? [{ kind: 'user', text: omitted.note }] : [];
  return [items[0]!, ...note, ...items.slice(1 + (omitted?.items ?? 0))];
}

/**
 * Applies a compaction (just decided, or read from the log) to `history`. Returns what does not
 * fit — a stub naming an item that is not that call's result, a note leaving out more than there
 * is — or undefined.
 */
export function applyCompaction(history: History, compaction: Compaction): string | undefined {
  for (const stub of compaction.stubbed) {
    const item = history.items[stub.item];
    if (item?.kind !== 'tool_result' || item.callId !== stub.callId)
      return `the compaction before turn ${compaction.turn} stubs item ${stub.item}, which is not the result of call ${stub.callId}`;
    history.items[stub.item] = { ...item, output: stub.stub };
    history.stubbed.add(stub.item);
  }
  if (compaction.omitted !== undefined) {
    if (1 + compaction.omitted.items > history.items.length)
      return `the compaction before turn ${compaction.turn} leaves out ${compaction.omitted.items} items of ${history.items.length - 1}`;
    history.omitted = compaction.omitted;
  }
  return undefined;
}

/**
 * The compaction the rule makes of `history` when the request it would send (`size`, in
 * characters) passes `bound`; undefined when it does not, or when nothing is left to compact.
 * Pure: `history` is not changed.
 */
export function planCompaction(
  history: History,
  rule: { bound: number; turn: number; size: (items: readonly ConversationItem[]) => number },
): Compaction | undefined {
  const charsBefore = rule.size(sentItems(history));
  if (charsBefore <= rule.bound) return undefined;
  // The latest answer and everything after it (its results, a steer) are what the model has not answered yet.
  const latest = history.items.findLastIndex((item) => item.kind === 'assistant');
  if (latest < 1) return undefined;
  const target = Math.floor(rule.bound * COMPACT_TO);
  const work: History = { items: [...history.items], stubbed: new Set(history.stubbed), omitted: history.omitted };
  const from = 1 + (history.omitted?.items ?? 0);
  let chars = charsBefore;
  const stubbed: Stubbed[] = [];
  for (let i = from; i < latest && chars > target; i++) {
    const item = work.items[i]!;
    if (item.kind !== 'tool_result' || work.stubbed.has(i)) continue;
    const stub = stubOf(i, item);
    if (stub.stub.length >= item.output.length) continue;
    work.items[i] = { ...item, output: stub.stub };
    work.stubbed.add(i);
    stubbed.push(stub);
    chars = rule.size(sentItems(work));
  }
  // A turn starts at each answer or operator message; its results follow it, so it goes whole.
  const starts = work.items.flatMap((item, i) => (i >= from && i <= latest && item.kind !== 'tool_result' ? [i] : []));
  let turns = history.omitted?.turns ?? 0;
  for (let next = 1; chars > target && next < starts.length; next++) {
    if (work.items[starts[next - 1]!]!.kind === 'assistant') turns++;
    const items = starts[next]! - 1;
    work.omitted = { items, turns, note: omissionNote(items, turns, rule.bound) };
    chars = rule.size(sentItems(work));
  }
  // A result stubbed and then left out with its turn is not sent: the record names what is.
  const sent = stubbed.filter((stub) => stub.item > (work.omitted?.items ?? 0));
  if (sent.length === 0 && work.omitted === history.omitted) return undefined;
  return {
    turn: rule.turn,
    bound: rule.bound,
    charsBefore,
    charsAfter: chars,
    stubbed: sent,
    ...(work.omitted !== history.omitted && work.omitted !== undefined ? { omitted: work.omitted } : {}),
  };
}

/** The stub of one result: enough for the model to know what it was, and where it is kept. */
function stubOf(item: number, result: Extract<ConversationItem, { kind: 'tool_result' }>): Stubbed {
  const digest = 'sha256:' + createHash('sha256').update(result.output).digest('hex');
  // A head cut inside a surrogate pair would send half a character.
  const head = result.output.slice(0, STUB_HEAD_CHARS).replace(/[\uD800-\uDBFF]$/, '');
  const more = head.length < result.output.length ? '…' : '';
  const stub =
    `[Compacted: this ${result.name} output (${result.output.length} characters, ${digest}) is kept in the loop's log ` +
    `and not shown again. It began: ${JSON.stringify(head)}${more}. If you need it, call a tool that changes ` +
    `nothing again.]`;
  return { item, callId: result.callId, name: result.name, outputChars: result.output.length, digest, stub };
}

function omissionNote(items: number, turns: number, bound: number): string {
  return (
    `[Compacted: ${items} earlier messages (${turns} of your turns with their tool calls and results) are left out ` +
    `here to keep this conversation within ${bound} characters. What they did is in the workspace.]`
  );
}
