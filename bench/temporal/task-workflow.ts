// The Temporal peer's workflow (bench/temporal-peer.bench.ts): one Task as a Temporal workflow.
// Each event the Host admitted arrives as a signal and is taken by the same Task statechart the
// kernel runs; the workflow completes when the statechart reaches a final state. Bundled by
// Temporal's worker into its deterministic sandbox, so it imports only the statechart (pure,
// `machines/`) and Temporal's workflow API.
import { condition, defineSignal, setHandler } from '@temporalio/workflow';
import { createActor } from 'xstate';
import { taskMachine, type TaskEvent } from '../../machines/index.js';

/** The signal carrying one journal event, as the statechart takes it. */
export const taskEvent = defineSignal<[TaskEvent]>('task.event');

/** One Task's lifecycle: resolves with the final state's name once the statechart is done. */
export async function taskWorkflow(): Promise<string> {
  const actor = createActor(taskMachine).start();
  setHandler(taskEvent, (event) => actor.send(event));
  await condition(() => actor.getSnapshot().status === 'done');
  return JSON.stringify(actor.getSnapshot().value);
}
