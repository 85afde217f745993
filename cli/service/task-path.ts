import { createActor } from 'xstate';
import type { EventRecord } from '../../store/index.js';
import { stateName, taskMachine } from '../../machines/index.js';
import { machineEventOf } from '../../recovery/index.js';

/** One move of the Task through its statechart: the event that moved it, from which state to which. */
export interface PathStep {
  revision: number;
  event: string;
  from: string;
  to: string;
}

/**
 * The states the Task passed through: its events (refused ones too) replayed through the statechart from
 * its start (as a Host replays another Host's commits), one step per event that changed the state.
 * An event the current machine cannot replay ends the path there rather than guessing.
 */
export function taskPath(
  events: ReadonlyArray<{ revision: number } & Pick<EventRecord, 'type' | 'data' | 'origin'>>,
): PathStep[] {
  const actor = createActor(taskMachine);
  actor.start();
  const steps: PathStep[] = [];
  try {
    for (const e of events) {
      const from = stateName(actor.getSnapshot().value);
      actor.send(machineEventOf(e, e.revision));
      const to = stateName(actor.getSnapshot().value);
      if (to !== from) steps.push({ revision: e.revision, event: e.type, from, to });
    }
  } catch {
    // A history written by another machine version: the steps so far are still the Task's.
  } finally {
    actor.stop();
  }
  return steps;
}
