import type { TaskEvent } from '../machines/index.js';
import { OBJECT_KINDS } from '../objects/index.js';
import { machineEventOf } from '../recovery/index.js';
import { EventStore } from '../store/index.js';

/** Every Task's events of `root` as the statechart takes them, in stream order (read untimed, for `stepFloor`). */
export async function machineEvents(root: string): Promise<TaskEvent[][]> {
  const store = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
  const streams: TaskEvent[][] = [];
  try {
    let taskId: string | undefined;
    let stream: TaskEvent[] = [];
    for (const { key, value } of store.databases.events.getRange({})) {
      const [id, revision] = key;
      if (id !== taskId) {
        if (stream.length > 0) streams.push(stream);
        taskId = id;
        stream = [];
      }
      stream.push(machineEventOf(value as Parameters<typeof machineEventOf>[0], revision));
    }
    if (stream.length > 0) streams.push(stream);
  } finally {
    await store.close();
  }
  return streams;
}
