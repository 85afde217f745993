/**
 * Scripts that send events to Task actors through a running `ordivon serve` (found by the state
 * root's service.json). The Task actor admits or refuses each one; the script prints the answer
 * and exits 0 admitted, 1 refused or retained (with the code), 2 malformed input.
 *
 *   node dist/examples/task-events.js reassign TASK_ID [--state DIR]   # waiting Task → the other harness
 *   node dist/examples/task-events.js cancel TASK_ID --reason TEXT [--state DIR]
 *   node dist/examples/task-events.js propose TASK_ID [--generation N] [--state DIR]
 *                                    # an external worker proposes completion with the evidence the Task holds
 *   node dist/examples/task-events.js <action> --help
 *
 * The command line is parsed like `ordivon`'s (cli/command-line.ts): one definition per action.
 */
import { z } from 'zod';
import { CliError, EXIT } from '../cli/cli-io.js';
import { isCliErrorCode } from '../cli/cli-codes.js';
import { packageVersion } from '../cli/version.js';
import { errorAnswer } from '../cli/error-answer.js';
import { command, positional, stringFlag, type Program } from '../cli/command.js';
import { parseCommandLine } from '../cli/command-line.js';
import { callService } from '../cli/service/service-client.js';
import { serviceFor } from '../cli/service/cli-route.js';

const OTHER: Record<string, string> = { codex: 'hermes', hermes: 'codex' };

/** The service's refusal of a request: `{error: {code, …}}`. */
const ServiceRefusal = z.object({ error: z.object({ code: z.string() }) });

interface TaskView {
  state: string;
  context: {
    generation: number;
    assignment: { harness: string; purpose: string } | null;
    evidence: Record<string, { digest: string }>;
  };
}

/** Reads the Task from the service, sends the event `make` builds from it, prints the actor's answer. */
async function sendEvent(
  action: string,
  state: string | undefined,
  taskId: string,
  make: (view: TaskView) => Record<string, unknown>,
): Promise<number> {
  const service = serviceFor(state);
  if (!service) throw new CliError('service_not_running', 'no `ordivon serve` holds this state root');
  const task = await callService(service, 'GET', `/tasks/${encodeURIComponent(taskId)}`);
  if (task.status !== 200) {
    const answered = ServiceRefusal.safeParse(task.body).data?.error.code;
    const code = answered !== undefined && isCliErrorCode(answered) ? answered : 'service_error';
    throw new CliError(code, JSON.stringify(task.body));
  }
  const event = make(task.body as TaskView);
  const sent = await callService(service, 'POST', `/tasks/${encodeURIComponent(taskId)}/events`, event);
  const result = sent.body as {
    admitted?: boolean;
    written?: boolean;
    code?: string;
    state?: string;
    revision?: number;
  };
  console.log(JSON.stringify({ action, taskId, event, status: sent.status, ...result }));
  return result.admitted ? EXIT.ok : sent.status === 400 ? EXIT.usage : EXIT.failed;
}

const taskId = { taskId: positional('TASK_ID', 'the Task') };

const PROGRAM: Program = {
  name: 'task-events',
  title: 'task-events — send events to Task actors through a running ordivon serve',
  commands: [
    command({
      name: 'reassign',
      summary: 'a waiting Task → the other harness, as generation + 1',
      positionals: taskId,
      flags: {
        stage: stringFlag('NAME', "the spec's stage to run (default: the current Assignment's again)"),
      },
      // Reassignment fences the current generation: the actor takes it only from waiting, open,
      // evaluating or an assigned state, and only as generation + 1.
      run: (args) =>
        sendEvent('reassign', args.state, args.taskId, (view) => ({
          type: 'assignment.commit',
          harness: OTHER[view.context.assignment?.harness ?? ''] ?? 'codex',
          // Without --stage, the current Assignment's purpose names its stage (or, without stages, is kept).
          ...(args.stage ? { stage: args.stage } : { purpose: view.context.assignment?.purpose ?? 'work' }),
          generation: view.context.generation + 1,
        })),
    }),
    command({
      name: 'cancel',
      summary: 'cancel a Task',
      positionals: taskId,
      flags: {
        reason: stringFlag('TEXT', 'why', (zod) => zod.string({ error: 'required' }).min(1, 'must not be empty'), {
          required: true,
        }),
      },
      run: (args) => sendEvent('cancel', args.state, args.taskId, () => ({ type: 'task.cancel', reason: args.reason })),
    }),
    command({
      name: 'propose',
      summary: 'an external worker proposes completion with the evidence the Task holds',
      positionals: taskId,
      flags: {
        generation: stringFlag(
          'N',
          "the generation it proposes for (default the Task's current one)",
          z
            .string()
            .regex(/^[0-9]+$/, 'must be a whole number')
            .transform(Number)
            .optional(),
        ),
      },
      run: (args) =>
        sendEvent('propose', args.state, args.taskId, (view) => ({
          type: 'completion.propose',
          generation: args.generation ?? view.context.generation,
          evidence: Object.fromEntries(Object.entries(view.context.evidence).map(([name, e]) => [name, e.digest])),
          proposer: 'external-worker',
          summary: 'proposed by examples/task-events.ts',
        })),
    }),
  ],
};

// A failure is one line of JSON on stdout, `{code, message, path?}`, and its exit code.
const fail = (error: CliError): never => {
  console.log(JSON.stringify(errorAnswer(error)));
  process.exit(error.exit);
};
const line = await parseCommandLine(PROGRAM, process.argv.slice(2));
if (line.kind === 'usage') {
  console.log(line.text);
  process.exit(EXIT.ok);
}
if (line.kind === 'version') {
  console.log(JSON.stringify({ version: packageVersion() }));
  process.exit(EXIT.ok);
}
if (line.kind === 'error') fail(line.error);
else {
  try {
    process.exit(await line.run({ json: true, out: (t) => console.log(t), err: (t) => console.error(t) }));
  } catch (error) {
    if (error instanceof CliError) fail(error);
    throw error;
  }
}
