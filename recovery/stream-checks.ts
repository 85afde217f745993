import type { Actor } from 'xstate';
import { classifyTransition, type TaskEvent, type TaskMachine } from '../machines/index.js';
import { safeParseEventRecord, type EventRecord, type RawEvent } from '../store/index.js';
import { eventDigest } from './digest.js';
import type { Finding } from './errors.js';

/**
 * The first two passes of `RecoveryVerifier.verifyStream` over one stream (verifier.ts says why
 * the checks run in passes): the chain of stored events, then their replay. Each stops at the
 * first failure and returns it as the finding that ends the stream.
 */

/** What pass 1 read of a stream: the chained records, the digest of the last, and why it stopped early, if it did. */
export interface Chain {
  records: EventRecord[];
  /** Digest of the last chained event (the start's digest, or null, when none chained). */
  prevDigest: string | null;
  stop: Finding | undefined;
  /** Events read that could be decoded (the ones a rebuild counts). */
  counted: number;
}

/**
 * Pass 1: decoded, contiguous, well-formed and chained, from revision `base + 1` on (the event at
 * `base` had digest `startDigest`, null for a stream from its start); stops at the first failure.
 */
export function chainEvents(
  taskId: string,
  events: Iterable<RawEvent>,
  base: number,
  startDigest: string | null,
): Chain {
  const records: EventRecord[] = [];
  let prevDigest: string | null = startDigest;
  let stop: Finding | undefined;
  let counted = 0;
  for (const raw of events) {
    const expected = base + records.length + 1;
    if (raw.error !== undefined) {
      stop = {
        code: 'stream_corrupt',
        taskId,
        revision: expected,
        object: `event ${expected}`,
        message: `task ${taskId} event ${expected} cannot be decoded: ${raw.error}`,
      };
      break;
    }
    counted++;
    const { revision, value } = raw;
    if (revision !== expected) {
      stop = {
        code: 'stream_gap',
        taskId,
        revision: expected,
        object: `event ${expected}`,
        message: `task ${taskId}: event ${expected} is missing (next stored is ${revision})`,
      };
      break;
    }
    const parsed = safeParseEventRecord(value);
    if (!parsed.success) {
      stop = {
        code: 'stream_corrupt',
        taskId,
        revision,
        object: `event ${revision}`,
        message: `task ${taskId} event ${revision} is malformed`,
      };
      break;
    }
    const record = parsed.data;
    if (record.prev !== prevDigest) {
      stop = {
        code: 'stream_corrupt',
        taskId,
        revision,
        object: `event ${revision}`,
        message: `task ${taskId} event ${revision} does not chain to event ${revision - 1} (prev ${record.prev ?? 'null'}, expected ${prevDigest ?? 'null'})`,
      };
      break;
    }
    records.push(record);
    prevDigest = eventDigest(record);
  }
  return { records, prevDigest, stop, counted };
}

/**
 * Pass 2: replays chained events on a started actor (at revision `base`), each taken as recorded
 * (`disposition`); stops at the first divergence. `replayed` events were taken as recorded.
 */
export function replayEvents(
  actor: Actor<TaskMachine>,
  taskId: string,
  records: EventRecord[],
  base: number,
): { replayed: number; divergence: Finding | undefined } {
  let divergence: Finding | undefined;
  let replayed = 0;
  for (; replayed < records.length; replayed++) {
    const record = records[replayed]!;
    const revision = base + replayed + 1;
    const before = actor.getSnapshot();
    actor.send(ownedMachineEvent(record, revision));
    const after = actor.getSnapshot();
    const taken = classifyTransition(before.context, after.context);
    if (after === before || !sameDisposition(taken, record.disposition)) {
      divergence = {
        code: 'replay_divergence',
        taskId,
        revision,
        object: `event ${revision}`,
        message: `task ${taskId} event ${revision} (${record.type}) was recorded ${JSON.stringify(record.disposition)} but the statechart ${after === before ? 'does not take it' : `gives ${JSON.stringify(taken)}`}`,
      };
      break;
    }
  }
  return { replayed, divergence };
}

function sameDisposition(
  taken: { admitted: boolean; code?: string },
  recorded: { admitted: boolean; code?: string },
): boolean {
  return taken.admitted === recorded.admitted && taken.code === recorded.code;
}

/**
 * `machineEventOf(record, revision)` built in `record.data` itself: the verifier owns the parsed
 * record (`safeParseEventRecord` and zod both copy `data`) and has hashed it already, so the
 * copy the kernel makes is not needed here. Same event: `type`, `revision` and `origin` win over
 * members of those names in `data`, as in the spread.
 */
function ownedMachineEvent(record: EventRecord, revision: number): TaskEvent {
  const event = record.data as Record<string, unknown>;
  event.type = record.type;
  event.revision = revision;
  event.origin = record.origin;
  return event as unknown as TaskEvent;
}
