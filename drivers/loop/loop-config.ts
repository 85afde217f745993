import { z } from 'zod';
import { EnvName } from '../env-name.js';
import { WireFormat } from './conversation.js';

const positive = () => z.number().int().positive();

/** The budgets and bounds of a loop run, with the value each has when the harness names none. */
const BOUNDS = {
  /** Model calls one run may make. */
  maxTurns: 50,
  /** The answer's own bound, as each wire format takes it. */
  maxOutputTokens: 4096,
  /** How long a model call may take to send its first byte. */
  firstByteTimeoutMs: 60_000,
  /** How long one model call may take, streaming included. */
  callTimeoutMs: 600_000,
  /** How long one `run_command` may take. */
  commandTimeoutMs: 120_000,
  /** A tool output is cut to this many characters before the model sees it. */
  maxToolOutputChars: 20_000,
  /**
   * A request body (as JSON: system prompt, tools and conversation) past this many characters has
   * its history compacted before it is sent (compaction.ts).
   */
  historyChars: 400_000,
} as const;

const endpoint = {
  format: WireFormat,
  baseUrl: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
  /** The environment variable that holds the API key; it must also be in the harness's `envFrom`. Absent: no key (a local server). */
  keyFrom: EnvName.optional(),
  /** Tokens (input and output, every turn) after which no model call is made. Absent: no bound. */
  maxTokens: positive().optional(),
};

/**
 * What a harness of driver `loop` configures (its `loop` key), kept as written: the model
 * endpoint (its wire format, base URL and the variable holding its key) and any budget it sets.
 * The model is the harness's `model`.
 */
export const LoopSettings = z.strictObject({
  ...endpoint,
  maxTurns: positive().optional(),
  maxOutputTokens: positive().optional(),
  firstByteTimeoutMs: positive().optional(),
  callTimeoutMs: positive().optional(),
  commandTimeoutMs: positive().optional(),
  maxToolOutputChars: positive().optional(),
  historyChars: positive().optional(),
});
export type LoopSettings = z.infer<typeof LoopSettings>;
export type LoopSettingsIn = z.input<typeof LoopSettings>;

/**
 * One run's loop: the settings with every bound given (`BOUNDS` where the harness named none),
 * where the Host has it keep its log, the Assignment generation it runs under and the
 * conversation it continues.
 */
export const LoopRunConfig = z.strictObject({
  ...endpoint,
  maxTurns: positive().default(BOUNDS.maxTurns),
  maxOutputTokens: positive().default(BOUNDS.maxOutputTokens),
  firstByteTimeoutMs: positive().default(BOUNDS.firstByteTimeoutMs),
  callTimeoutMs: positive().default(BOUNDS.callTimeoutMs),
  commandTimeoutMs: positive().default(BOUNDS.commandTimeoutMs),
  maxToolOutputChars: positive().default(BOUNDS.maxToolOutputChars),
  historyChars: positive().default(BOUNDS.historyChars),
  /**
   * The stage's budget from the Task's spec: model calls, and tokens (input and output), the
   * conversation may spend since it last went over them (its start, or the end of the run that
   * went over them, when a newer generation took it up). Absent: no bound but the harness's.
   */
  stageMaxTurns: positive().optional(),
  stageMaxTokens: positive().optional(),
  logDir: z.string().refine((p) => p.startsWith('/'), 'must be an absolute path'),
  generation: z.number().int().nonnegative(),
  /**
   * What makes two runs of the Attempt one conversation (the Host gives the stage's name): a newer
   * generation takes an older one's up only when this is the same.
   */
  conversation: z.string().min(1),
  /**
   * The previous generation's run of this conversation was stopped by the Host before it was
   * observed (its job abandoned): the conversation is taken up even if it came to its own end.
   */
  continuesStopped: z.boolean().optional(),
});
export type LoopRunConfig = z.infer<typeof LoopRunConfig>;
