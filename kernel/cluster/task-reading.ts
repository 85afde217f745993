import type { StateValue } from 'xstate';
import { snapshotView, type TaskMachineContext } from '../../machines/index.js';
import { OBJECT_KINDS, TaskSpec } from '../../objects/index.js';
import {
  StoreError,
  objectMatches,
  objectValue,
  type EventRecord,
  type EventStore,
  type ObjectKinds,
} from '../../store/index.js';
import type { PgHistory, SharedTask } from '../../store/postgres/index.js';
import { HostError, hostErrorOf } from '../errors.js';
import type { TaskView } from '../supervisor-options.js';

/** A Task with its events and objects, wherever it is served (`Supervisor.readTask`). */
export interface TaskReading {
  view: TaskView;
  /** True when another Host serves the Task: a read-only view of the shared history. */
  elsewhere: boolean;
  /** With a cluster: the Host holding the Task's lease (null while nobody does). */
  servedBy?: string | null;
  events: Array<{ revision: number } & EventRecord>;
  /** An object the Task's events wrote or named, re-checked against its digest and its kind's schema. */
  getObject<T = unknown>(digest: string, kind?: string): { kind: string; body: T };
}

/** A Task this Host serves, as its `view`, `events` and `store` give it. */
export function readHere(here: {
  view: TaskView;
  events: TaskReading['events'];
  store: EventStore;
  hostId: string | undefined;
}): TaskReading {
  const { view, events, store, hostId } = here;
  return {
    view,
    elsewhere: false,
    ...(hostId ? { servedBy: hostId } : {}),
    events,
    getObject: (digest) => store.getObject(digest),
  };
}

/** A Task another Host serves, read from the shared history in one snapshot; undefined when there is none. */
export async function readElsewhere(history: PgHistory, taskId: string): Promise<TaskReading | undefined> {
  let shared: SharedTask | undefined;
  try {
    shared = await history.readTask(taskId);
  } catch (error) {
    throw error instanceof StoreError ? hostErrorOf(error) : error;
  }
  return shared && readingOf(shared);
}

function readingOf(shared: SharedTask): TaskReading {
  const { taskId, projection } = shared;
  if (!projection)
    throw new HostError('record_corrupt', `task ${taskId} has events in the shared history but no projection`);
  const objects = new Map(shared.objects.map((o) => [o.digest, o.bytes]));
  const getObject = <T>(digest: string, kind?: string): { kind: string; body: T } => {
    const bytes = objects.get(digest);
    if (bytes === undefined) throw new HostError('object_missing', `object ${digest} is missing`);
    const value = objectMatches({ bytes }, digest) ? objectValue({ bytes }) : undefined;
    const schema = value && (OBJECT_KINDS as ObjectKinds)[value.kind];
    if (!value || !schema?.safeParse(value.body).success || (kind !== undefined && value.kind !== kind))
      throw new HostError('object_corrupt', `object ${digest} is not a valid ${kind ?? value?.kind ?? 'object'}`);
    return value as { kind: string; body: T };
  };
  // The projection is the snapshot the serving Host committed with the head event.
  const snapshot = projection.snapshot as { value: StateValue; status?: string; context: TaskMachineContext };
  const context = snapshot.context;
  if (!context.specDigest) throw new HostError('record_corrupt', `task ${taskId}: its projection names no spec`);
  const spec = TaskSpec.parse(getObject(context.specDigest, 'task-spec').body);
  return {
    view: {
      taskId,
      revision: projection.revision,
      ...snapshotView(snapshot),
      context,
      spec,
    },
    elsewhere: true,
    servedBy: shared.owner,
    events: shared.events.map(({ revision, record }) => ({ revision, ...record })),
    getObject,
  };
}
