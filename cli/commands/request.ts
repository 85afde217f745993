import { CliError, EXIT, emit, parseJson, type Io } from '../cli-io.js';
import { command, positional } from '../command.js';
import type { DecideAnswer } from '../service/decide-answer.js';
import { throwRefused } from './decide.js';
import { withSupervisor } from './write.js';

/**
 * `ordivon request open TASK_ID REQUEST_JSON`: opens an `operator` DecisionRequest, as
 * `Supervisor.openRequest` and `POST /tasks/:id/requests` do. The request is parsed before the
 * state root is touched: exit 2 (`invalid_json`, `invalid_request` with the field) writes nothing.
 * Exit 0 opened, or the same question already open under that id (nothing written); 1 refused
 * (`request_exists`, `task_not_found`, a Task that takes no more events, …).
 */
export const requestOpen = command({
  name: 'request open',
  summary: 'open an operator DecisionRequest (a question put to a person; ordivon decide answers it)',
  details: [
    'REQUEST_JSON has the request fields: requestId, pendingAction, participant, alternatives [{id, summary}],',
    'allowed (ids of alternatives), evidence, unresolvedClaims, consequence, reversibility',
    '(reversible|irreversible|unknown), authority, budgetImpact, revokedWhen, costOfDelay, and optional ttlMs',
    '(how long an answer is taken; absent or null: no deadline). The Host binds it to the Task’s generation,',
    'current Context and world revision. Opening the same question again writes nothing (exit 0); another',
    'question under an id the Task has is request_exists (exit 1). While a service holds the state root, it',
    'goes through its control API.',
  ],
  positionals: {
    taskId: positional('TASK_ID', 'the Task to ask about'),
    requestJson: positional('REQUEST_JSON', 'the request, e.g. \'{"requestId":"ship-4.2","pendingAction":"…",…}\''),
  },
  async run(values, io) {
    const { taskId } = values;
    const request = parseJson(values.requestJson, 'REQUEST_JSON');
    const [{ OperatorRequestInput }, { zodIssue }] = await Promise.all([
      import('../../kernel/index.js'),
      import('../../base/index.js'),
    ]);
    // The supervisor parses it again; this parse is the one that runs before anything is opened.
    const parsed = OperatorRequestInput.safeParse(request);
    if (!parsed.success) {
      const { path, message } = zodIssue('invalid_request', parsed.error);
      throw new CliError('invalid_request', `REQUEST_JSON ${path}: ${message}`, { exit: EXIT.usage, path });
    }
    const [{ openViaService }, { decideAnswer }] = await Promise.all([
      import('../service/cli-route.js'),
      import('../service/decide-answer.js'),
    ]);
    return withSupervisor(
      values.state,
      async (sup) => report(io, decideAnswer(taskId, parsed.data.requestId, await sup.openRequestRaw(taskId, request))),
      { viaService: async (service) => report(io, await openViaService(service, taskId, request)) },
    );
  },
});

/** The opened request (or the same question already open) on stdout, exit 0; a refusal on stderr (`throwRefused`). */
function report(io: Io, answer: DecideAnswer): number {
  throwRefused(answer);
  emit(io, answer, () =>
    answer.duplicate
      ? `request ${answer.requestId} is already open as asked (opened at revision ${answer.revision}); nothing written`
      : `opened ${answer.requestId} at revision ${answer.revision}; task is ${answer.state}`,
  );
  return EXIT.ok;
}
