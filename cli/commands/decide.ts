import { EXIT, emit, taskRefusal, type Io } from '../cli-io.js';
import { command, positional, stringFlag } from '../command.js';
import type { DecideAnswer } from '../service/decide-answer.js';
import { withSupervisor } from './write.js';

/**
 * `ordivon decide TASK_ID REQUEST_ID --answer ID [--by NAME] [--note TEXT]`: answers a
 * DecisionRequest. Exit 0 admitted, 1 refused with its code (decision_unknown,
 * decision_not_pending, decision_expired, decision_revoked, decision_stale, answer_not_allowed,
 * task_not_found, …), 2 malformed input (nothing written).
 */
export const decide = command({
  name: 'decide',
  summary: 'answer a DecisionRequest (exit 1 with the refusal code when it is not taken)',
  details: [
    'The statechart decides on the Host clock: an answer at or past the deadline is decision_expired, one to a',
    'request already answered decision_not_pending (naming the answer). While a service holds the state root,',
    'the answer goes through its control API.',
  ],
  positionals: {
    taskId: positional('TASK_ID', 'the Task the request belongs to'),
    requestId: positional('REQUEST_ID', 'the DecisionRequest (ordivon show lists them)'),
  },
  flags: {
    answer: stringFlag(
      'ID',
      'one of the answers the request takes',
      (z) => z.string({ error: 'required' }).min(1).max(200),
      { required: true },
    ),
    by: stringFlag('NAME', 'who answers (default: external)', (z) => z.string().min(1).max(200).optional()),
    note: stringFlag('TEXT', 'a note kept with the answer', (z) => z.string().max(2_000).optional()),
  },
  async run(values, io) {
    const { taskId, requestId } = values;
    const body = {
      answer: values.answer,
      ...(values.by !== undefined ? { answeredBy: values.by } : {}),
      ...(values.note !== undefined ? { note: values.note } : {}),
    };
    const [{ decideViaService }, { decideAnswer }] = await Promise.all([
      import('../service/cli-route.js'),
      import('../service/decide-answer.js'),
    ]);
    return withSupervisor(
      values.state,
      async (sup) =>
        report(
          io,
          decideAnswer(taskId, requestId, await sup.send(taskId, { type: 'request.answer', requestId, ...body })),
        ),
      { viaService: async (service) => report(io, await decideViaService(service, taskId, requestId, body)) },
    );
  },
});

/** Throws a refused or retained answer (`decide`, `request open`) as a `taskRefusal` naming the request: stderr, exit 1 (`invalid_event`, `invalid_request` 2). */
export function throwRefused(answer: DecideAnswer): void {
  if (!answer.error) return;
  const { taskId, requestId, state, revision, written, duplicate } = answer;
  throw taskRefusal(
    answer.error.code,
    answer.error.message,
    { taskId, state, revision, written },
    { path: answer.error.path, details: { requestId, ...(duplicate !== undefined ? { duplicate } : {}) } },
  );
}

/** An admitted answer on stdout (exit 0); a refused or retained one is thrown (`throwRefused`). */
function report(io: Io, answer: DecideAnswer): number {
  throwRefused(answer);
  emit(io, answer, () => `answered ${answer.requestId} at revision ${answer.revision}; task is ${answer.state}`);
  return EXIT.ok;
}
