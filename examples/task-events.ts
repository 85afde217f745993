/**
 * Scripts that send events to Task actors through a running `ordivon serve` (found by the state
 * root's service.json). The Task actor admits or refuses each one; the script prints the answer
 * and exits 0 admitted, 1 refused or retained (with the code), 2 malformed input.
 *
 *   node dist/examples/task-events.js reassign TASK_ID [--state DIR]   # waiting Task → the other harness
 *   node dist/examples/task-events.js cancel TASK_ID --reason TEXT [--state DIR]
 *   node dist/examples/task-events.js propose TASK_ID --generation N [--state DIR]
 *                                    # an external worker proposes completion with the evidence the Task holds
 */
import { parseArgs } from 'node:util';
import { callService } from '../scripts/service/service-client.js';
import { serviceFor } from '../scripts/service/cli-route.js';

const OTHER: Record<string, string> = { codex: 'hermes', hermes: 'codex' };

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { state: { type: 'string' }, reason: { type: 'string' }, generation: { type: 'string' } },
});
const [action, taskId] = positionals;
const fail = (code: string, message: string, exit: number): never => {
  console.log(JSON.stringify({ code, message }));
  process.exit(exit);
};
if (!taskId || !['reassign', 'cancel', 'propose'].includes(action ?? ''))
  fail('usage', 'usage: task-events reassign|cancel|propose TASK_ID [...]', 2);
const service = serviceFor(values.state) ?? fail('service_not_running', 'no `ordivon serve` holds this state root', 1);

const task = await callService(service, 'GET', `/tasks/${encodeURIComponent(taskId!)}`);
if (task.status !== 200)
  fail(
    (task.body as { error?: { code?: string } } | undefined)?.error?.code ?? 'service_error',
    JSON.stringify(task.body),
    1,
  );
const view = task.body as {
  state: string;
  context: { generation: number; assignment: { harness: string } | null; evidence: Record<string, { digest: string }> };
};

let event: Record<string, unknown>;
if (action === 'reassign') {
  // Reassignment fences the current generation: the actor takes it only from waiting, open,
  // evaluating or an assigned state, and only as generation + 1.
  const harness = OTHER[view.context.assignment?.harness ?? ''] ?? 'codex';
  event = { type: 'assignment.commit', harness, purpose: 'repair', generation: view.context.generation + 1 };
} else if (action === 'cancel') {
  event = { type: 'task.cancel', reason: values.reason ?? fail('usage', '--reason is required', 2) };
} else {
  const generation = Number(values.generation ?? view.context.generation);
  const evidence = Object.fromEntries(Object.entries(view.context.evidence).map(([name, e]) => [name, e.digest]));
  event = {
    type: 'completion.propose',
    generation,
    evidence,
    proposer: 'external-worker',
    summary: 'proposed by examples/task-events.ts',
  };
}
const sent = await callService(service, 'POST', `/tasks/${encodeURIComponent(taskId!)}/events`, event);
const result = sent.body as { admitted?: boolean; written?: boolean; code?: string; state?: string; revision?: number };
console.log(JSON.stringify({ action, taskId, event, status: sent.status, ...result }));
process.exit(result.admitted ? 0 : sent.status === 400 ? 2 : 1);
