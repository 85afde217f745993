import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { Compaction } from './compaction.js';
import { ModelTurn, ToolCall } from './conversation.js';

/**
 * Loop v0's own log: its conversation, one durable record per step, in a folder the Host gives it
 * per Task Attempt (outside every sandbox). The owner rule decides what is here and what is not:
 * the Host owns what the Task means (its history: the Assignment, the run's receipt, admission),
 * the Runtime owns the run's process and job, and the loop owns its conversation — the model's
 * answers and the tool calls' intents and results, which no Task decision reads. So this is not a
 * second Task database: nothing here is Task truth, and a lost folder costs the conversation
 * (the next run starts over), never an admitted fact.
 *
 * One file per Assignment generation (`g<generation>.jsonl`), appended; a record is durable before
 * anything outside the log depends on it (`append`): a tool call's intent before the tool runs,
 * its result before the next model call, the end before the run reports it. A newer generation
 * adopts the newest older log of the same conversation (the stage; copies its records) and closes
 * it (`g<k>.closed`): a loop still running under that generation sees the mark before its next
 * step and stops.
 */

/** Tool outputs longer than this are kept once, by digest, in `blobs/` (a claim check). */
export const INLINE_OUTPUT_MAX = 4_096;

const Digest = z.string().regex(/^sha256:[0-9a-f]{64}$/);

/** What became of one tool call, as the log keeps it: the output inline, or by digest when long. */
export const LoggedOutcome = z.strictObject({
  ok: z.boolean(),
  output: z.string().optional(),
  outputDigest: Digest.optional(),
  outputChars: z.number().int().nonnegative(),
  code: z.string().optional(),
  finish: z.strictObject({ summary: z.string() }).optional(),
  exitCode: z.number().int().nullable().optional(),
});
export type LoggedOutcome = z.infer<typeof LoggedOutcome>;

const at = z.string();

/** One line of the log. */
export const LogRecord = z.discriminatedUnion('t', [
  z.strictObject({
    t: z.literal('start'),
    generation: z.number().int().nonnegative(),
    runId: z.string(),
    conversation: z.string(),
    contextDigest: z.string(),
    /** The older generation whose records were copied in after this one. */
    adopted: z.strictObject({ generation: z.number().int().nonnegative(), records: z.number().int() }).optional(),
    at,
  }),
  z.strictObject({ t: z.literal('model_request'), turn: z.number().int().nonnegative(), at }),
  z.strictObject({ t: z.literal('model_response'), turn: z.number().int().nonnegative(), answer: ModelTurn, at }),
  z.strictObject({ t: z.literal('tool_intent'), call: ToolCall, at }),
  z.strictObject({ t: z.literal('tool_result'), callId: z.string(), name: z.string(), outcome: LoggedOutcome, at }),
  /** An operator's message, taken from the inbox (`source`: its file) at a turn boundary. */
  z.strictObject({ t: z.literal('steer'), text: z.string(), source: z.string().optional(), at }),
  /** The history compacted before a model call (compaction.ts): replayed as recorded, never decided again. */
  z.strictObject({ t: z.literal('compact'), ...Compaction.shape, at }),
  z.strictObject({ t: z.literal('end'), reason: z.string(), at }),
]);
export type LogRecord = z.infer<typeof LogRecord>;
/** A record as appended: its time is added by the log. */
export type NewRecord = LogRecord extends infer R ? (R extends LogRecord ? Omit<R, 'at'> : never) : never;

/** One file of the inbox, as the Host writes it for an admitted `task.steer` (host/loop-steers.ts). */
export const SteerFile = z.object({ message: z.string().min(1) });

/** Why a log could not be opened or read: the run fails with this code. */
export class StepLogError extends Error {
  constructor(
    readonly code: 'loop_log_unreadable' | 'loop_log_corrupt' | 'loop_log_closed',
    message: string,
  ) {
    super(message);
    this.name = 'StepLogError';
  }
}

/** The records of one log file; a torn last line (a crash mid-write) is not a record. */
export function readLogFile(path: string): LogRecord[] {
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n');
  // The part after the last newline never became durable as a whole line.
  lines.pop();
  return lines.map((line, i) => {
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw new StepLogError('loop_log_corrupt', `${path} line ${i + 1} is not JSON`);
    }
    const parsed = LogRecord.safeParse(json);
    if (!parsed.success)
      throw new StepLogError(
        'loop_log_corrupt',
        `${path} line ${i + 1}: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`,
      );
    return parsed.data;
  });
}

/**
 * The ends of a run over its stage's budget: a newer generation (a person let it go on, or a new
 * Assignment) takes the conversation up and keeps these end records, from the last of which the
 * stage's budget counts again (loop-run.ts `budgetSpent`).
 */
export const STAGE_BUDGET_ENDS: ReadonlySet<string> = new Set(['stage_turn_budget', 'stage_token_budget']);

/** The ends after which a newer generation takes the conversation up where it stopped: stopped from outside, or over its stage's budget. */
const CONTINUABLE_ENDS = new Set(['aborted', 'model_failed', 'loop_closed', ...STAGE_BUDGET_ENDS]);

const logName = (generation: number) => `g${generation}.jsonl`;
const closedName = (generation: number) => `g${generation}.closed`;

/** The generations with a log in `dir`, newest first. */
function generationsIn(dir: string): number[] {
  return readdirSync(dir)
    .map((name) => /^g(\d+)\.jsonl$/.exec(name)?.[1])
    .filter((g): g is string => g !== undefined)
    .map(Number)
    .sort((a, b) => b - a);
}

/** Where the log of one run lives, and whose it is. */
export interface StepLogPlace {
  dir: string;
  generation: number;
  runId: string;
  /** Runs of the same conversation (the stage) continue each other; others start over. */
  conversation: string;
  /**
   * The previous generation's run was stopped by the Host before the Host saw it end (its job
   * abandoned: a crash between the loop's end and the job's): its conversation is taken up even
   * when it came to its own end, which this run then reports again without asking the model.
   */
  continueEnded?: boolean;
  contextDigest: string;
  now: () => string;
}

/**
 * The open log of one generation. `records` is everything durable so far (adopted ones included),
 * in order; `append` adds one and returns once it is on disk.
 */
export class StepLog {
  readonly records: LogRecord[];
  readonly #fd: number;
  readonly #place: StepLogPlace;

  private constructor(place: StepLogPlace, fd: number, records: LogRecord[]) {
    this.#place = place;
    this.#fd = fd;
    this.records = records;
  }

  /**
   * Opens this generation's log: the records already in it (a restart of the same generation), or
   * a new log that adopts the newest older generation's records when that one was the same
   * conversation. Its Context is not compared: every generation's prompt names its generation, and
   * the first message is always this run's prompt.
   * Throws `StepLogError` `loop_log_closed` when a newer generation has closed this one.
   */
  static open(place: StepLogPlace): StepLog {
    mkdirSync(join(place.dir, 'blobs'), { recursive: true });
    if (existsSync(join(place.dir, closedName(place.generation))))
      throw new StepLogError(
        'loop_log_closed',
        `generation ${place.generation}'s loop was closed by a newer Assignment`,
      );
    const path = join(place.dir, logName(place.generation));
    if (existsSync(path)) {
      const records = readLogFile(path);
      const fd = openSync(path, 'a');
      // A torn last line (a crash mid-write) is cut off, so the next record starts on a line of its own.
      const whole = readFileSync(path).lastIndexOf(0x0a) + 1;
      if (whole < fstatSync(fd).size) {
        ftruncateSync(fd, whole);
        fsyncSync(fd);
      }
      return new StepLog(place, fd, records);
    }
    const records = StepLog.adopt(place);
    // Written whole, then renamed: a crash leaves either no log or one that starts with `start`.
    const staging = `${path}.new`;
    writeFileSync(staging, records.map((r) => JSON.stringify(r) + '\n').join(''));
    syncFile(staging);
    renameSync(staging, path);
    syncDir(place.dir);
    return new StepLog(place, openSync(path, 'a'), records);
  }

  /** The start record, then the newest older log's records (when its Context is this run's), which it then closes. */
  private static adopt(place: StepLogPlace): LogRecord[] {
    const older = generationsIn(place.dir).find((g) => g < place.generation);
    const start = (adopted?: { generation: number; records: number }): LogRecord => ({
      t: 'start',
      generation: place.generation,
      runId: place.runId,
      conversation: place.conversation,
      contextDigest: place.contextDigest,
      ...(adopted ? { adopted } : {}),
      at: place.now(),
    });
    if (older === undefined) return [start()];
    const theirs = readLogFile(join(place.dir, logName(older)));
    const first = theirs[0];
    if (first?.t !== 'start' || first.conversation !== place.conversation) return [start()];
    // A conversation that came to its own end (finished, stopped, out of its harness's budget) is
    // not continued: the run after it is a new try. One stopped from outside (a cancel, a drain, a
    // failed call) or over its stage's budget (a person or a new Assignment lets it go on) is.
    // One whose run the Host never saw end (continueEnded) is this run's own, end and all.
    const ended = theirs.findLast((r) => r.t === 'end');
    if (ended?.t === 'end' && !CONTINUABLE_ENDS.has(ended.reason) && place.continueEnded !== true) return [start()];
    // Their conversation continues here; the rest of theirs (without their own start) follows ours.
    const steps = theirs.filter((r) => r.t !== 'start' && (r.t !== 'end' || STAGE_BUDGET_ENDS.has(r.reason)));
    const closed = join(place.dir, closedName(older));
    writeFileSync(closed, `${place.generation}\n`);
    syncFile(closed);
    return [start({ generation: older, records: steps.length }), ...steps];
  }

  /** True once a newer generation has closed this log: the loop must stop before its next step. */
  closed(): boolean {
    return existsSync(join(this.#place.dir, closedName(this.#place.generation)));
  }

  /**
   * Appends one record and, unless `sync` is false, makes it durable before returning. The log is
   * one append-only file, so a synced record makes every record before it durable too: a record
   * nothing outside the log acts on before the next synced one (the model's request, its answer
   * when a tool intent or the end follows) is written without a sync of its own and becomes
   * durable with that next one. What a machine crash can lose is then only a tail that the next
   * run asks the model for again; never a tool intent, a tool result or the end.
   */
  append(record: NewRecord, sync = true): LogRecord {
    const full = LogRecord.parse({ ...record, at: this.#place.now() });
    writeSync(this.#fd, JSON.stringify(full) + '\n');
    if (sync) fsyncSync(this.#fd);
    this.records.push(full);
    return full;
  }

  /**
   * The operator's messages the Host left in `inbox/` (one `r<revision>.json` per admitted
   * `task.steer`) that no steer record of this conversation has taken yet, oldest first. A file
   * that does not parse is skipped: the Host writes each whole, by rename.
   */
  unreadSteers(): Array<{ source: string; text: string }> {
    const inbox = join(this.#place.dir, 'inbox');
    if (!existsSync(inbox)) return [];
    const taken = new Set(this.records.flatMap((r) => (r.t === 'steer' && r.source ? [r.source] : [])));
    const revision = (name: string) => Number(/^r(\d+)\.json$/.exec(name)?.[1] ?? NaN);
    return readdirSync(inbox)
      .filter((name) => Number.isInteger(revision(name)) && !taken.has(name))
      .sort((a, b) => revision(a) - revision(b))
      .flatMap((name) => {
        try {
          const parsed = SteerFile.safeParse(JSON.parse(readFileSync(join(inbox, name), 'utf8')));
          return parsed.success ? [{ source: name, text: parsed.data.message }] : [];
        } catch {
          return [];
        }
      });
  }

  /** Keeps `output` in the log: inline when short, else once in `blobs/` by digest. */
  keepOutput(output: string): Pick<LoggedOutcome, 'output' | 'outputDigest' | 'outputChars'> {
    if (output.length <= INLINE_OUTPUT_MAX) return { output, outputChars: output.length };
    const digest = 'sha256:' + createHash('sha256').update(output).digest('hex');
    const path = join(this.#place.dir, 'blobs', digest.slice('sha256:'.length));
    if (!existsSync(path)) {
      writeFileSync(`${path}.new`, output);
      syncFile(`${path}.new`);
      renameSync(`${path}.new`, path);
    }
    return { outputDigest: digest, outputChars: output.length };
  }

  /** The output a logged outcome holds, read back from `blobs/` when it was kept by digest. */
  outputOf(outcome: LoggedOutcome): string {
    if (outcome.output !== undefined) return outcome.output;
    if (outcome.outputDigest === undefined) return '';
    const path = join(this.#place.dir, 'blobs', outcome.outputDigest.slice('sha256:'.length));
    try {
      return readFileSync(path, 'utf8');
    } catch {
      throw new StepLogError('loop_log_unreadable', `the tool output ${outcome.outputDigest} is missing from ${path}`);
    }
  }

  close(): void {
    closeSync(this.#fd);
  }
}

function syncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function syncDir(dir: string): void {
  syncFile(dir);
}
