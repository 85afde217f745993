import type { TaskEvent } from '../machines/index.js';
import type { EventRecord } from '../store/index.js';

/** The statechart event a stored record stands for: its data, plus the revision and origin it carries. */
export function machineEventOf(record: Pick<EventRecord, 'type' | 'data' | 'origin'>, revision: number): TaskEvent {
  return { ...record.data, type: record.type, revision, origin: record.origin } as TaskEvent;
}

/** The part of a statechart event that is stored as `data` (type, revision and origin are kept apart). */
export function dataOf(event: TaskEvent): Record<string, unknown> {
  const { type: _type, revision: _revision, origin: _origin, ...data } = event;
  return data;
}
