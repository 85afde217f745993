import { createActor } from 'xstate';
import { type Supervisor, type Committed, hostErrorOf } from '../../kernel/index.js';
import { snapshotView, taskMachine } from '../../machines/index.js';
import { machineEventOf } from '../../recovery/index.js';
import { StoreError, type EventRecord } from '../../store/index.js';

/**
 * A Task's commits after revision `after`, read from the store, as the live stream sent them:
 * the stored events hold no state, so the state and frontier after each is found by replaying
 * the Task's events through the statechart from its start (as recovery does). On a PostgreSQL
 * history the events are read from the shared history, each with the Host that wrote it
 * (`host`), which is also where a Task another Host serves is read; on LMDB from this Host's store.
 */
export async function committedAfter(sup: Supervisor, taskId: string, after: number): Promise<Committed[]> {
  const history = sup.history;
  let events: Array<{ revision: number; record: EventRecord; hostId?: string }>;
  try {
    events = history
      ? await history.readEvents(taskId, 0, Number.MAX_SAFE_INTEGER)
      : sup.events(taskId).map(({ revision, ...record }) => ({ revision, record }));
  } catch (error) {
    throw error instanceof StoreError ? hostErrorOf(error) : error;
  }
  if ((events.at(-1)?.revision ?? 0) <= after) return [];
  const actor = createActor(taskMachine);
  actor.start();
  const missed: Committed[] = [];
  try {
    for (const { revision, record, hostId } of events) {
      actor.send(machineEventOf(record, revision));
      if (revision <= after) continue;
      const { state, frontier } = snapshotView(actor.getSnapshot());
      const committed: Committed = {
        taskId,
        revision,
        type: record.type,
        origin: record.origin,
        state,
        frontier,
        admitted: record.disposition.admitted,
      };
      if (!record.disposition.admitted) committed.code = record.disposition.code;
      if (hostId !== undefined) committed.host = hostId;
      missed.push(committed);
    }
  } finally {
    actor.stop();
  }
  return missed;
}
