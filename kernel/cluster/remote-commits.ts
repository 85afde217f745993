import { createActor, type Actor } from 'xstate';
import { snapshotView, taskMachine, type FrontierWork } from '../../machines/index.js';
import { machineEventOf } from '../../objects/index.js';
import type { Projection } from '../../store/index.js';
import type { SharedEvent, WatchedCommits } from '../../store/postgres/index.js';
import type { Committed } from '../send-result.js';

/** Reads a Task's events in (after, upTo] from the shared history (`PgHistory.readEvents`). */
export type ReadEvents = (taskId: string, after: number, upTo: number) => Promise<SharedEvent[]>;

/** How many Tasks served elsewhere keep their last snapshot here (the others replay from their start when they next move by several events). */
const SNAPSHOTS_KEPT = 1024;

/**
 * Turns what the watch found of other Hosts' commits into the `Committed` records subscribers
 * hear, each once and in revision order per Task. The database keeps a Task's projection at its
 * head only, so the state after each of several new events is found by replaying them through the
 * statechart from the snapshot before them (the last one seen here, or the Task's start); the
 * last event takes the state of the stored projection, which the writing Host committed.
 */
export class RemoteCommits {
  /** The last revision of each Task reported to subscribers, by this Host's own commits or from the watch. */
  private readonly reported = new Map<string, number>();
  /** The persisted snapshot of Tasks served elsewhere at their last revision seen here, newest last. */
  private readonly snapshots = new Map<string, { revision: number; snapshot: Record<string, unknown> }>();

  constructor(private readonly readEvents: ReadEvents) {}

  /** A commit this Host made and reported itself: the watch does not report it again. */
  reportedHere(taskId: string, revision: number): void {
    if (revision > (this.reported.get(taskId) ?? 0)) this.reported.set(taskId, revision);
  }

  /** The records of `commits` not reported yet, in revision order (each with the Host that wrote it). */
  async committedOf(commits: WatchedCommits): Promise<Committed[]> {
    const { taskId, projection } = commits;
    const last = this.reported.get(taskId) ?? 0;
    const fresh = commits.events.filter((e) => e.revision > last);
    const top = fresh.at(-1);
    if (!top) return [];
    this.reported.set(taskId, top.revision);
    const states = await this.statesAfter(taskId, fresh, projection);
    return fresh.map((event, i) => {
      const { state, frontier } = states[i]!;
      const { type, origin, disposition } = event.record;
      const committed: Committed = {
        taskId,
        revision: event.revision,
        type,
        origin,
        state,
        frontier,
        admitted: disposition.admitted,
        host: event.hostId,
      };
      if (!disposition.admitted) committed.code = disposition.code;
      return committed;
    });
  }

  /** The state and frontier after each event of `fresh` (ascending revisions, maybe with gaps). */
  private async statesAfter(
    taskId: string,
    fresh: SharedEvent[],
    projection: Projection | undefined,
  ): Promise<Array<{ state: string; frontier: FrontierWork }>> {
    const top = fresh.at(-1)!;
    const atHead = projection?.revision === top.revision ? projection : undefined;
    if (fresh.length === 1 && atHead) {
      this.keep(taskId, atHead.revision, atHead.snapshot);
      return [snapshotView(atHead.snapshot)];
    }
    // Replay from the snapshot kept here (from the Task's start without one), reading the events
    // between it and the fresh ones: this Host's own, which the watch leaves out, around a handover.
    const kept = this.snapshots.get(taskId);
    const base = kept && kept.revision < fresh[0]!.revision ? kept : undefined;
    const continues = base !== undefined && fresh.every((e, i) => e.revision === base.revision + 1 + i);
    const replay = continues ? fresh : await this.readEvents(taskId, base?.revision ?? 0, top.revision);
    const actor: Actor<typeof taskMachine> = createActor(taskMachine, base ? { snapshot: base.snapshot as never } : {});
    actor.start();
    const after = new Map<number, { state: string; frontier: FrontierWork }>();
    for (const event of replay) {
      actor.send(machineEventOf(event.record, event.revision));
      after.set(event.revision, snapshotView(actor.getSnapshot()));
    }
    const replayed = actor.getPersistedSnapshot() as Record<string, unknown>;
    actor.stop();
    if (atHead) after.set(top.revision, snapshotView(atHead.snapshot));
    this.keep(taskId, top.revision, atHead?.snapshot ?? replayed);
    return fresh.map((e) => after.get(e.revision) ?? snapshotView(atHead?.snapshot ?? replayed));
  }

  private keep(taskId: string, revision: number, snapshot: Record<string, unknown>): void {
    this.snapshots.delete(taskId);
    this.snapshots.set(taskId, { revision, snapshot });
    if (this.snapshots.size > SNAPSHOTS_KEPT) this.snapshots.delete(this.snapshots.keys().next().value!);
  }
}
