import type { TaskSpecInput } from '../../objects/index.js';
import type { Supervisor } from '../../kernel/index.js';
import type { SendAnswer } from '../service/cli-route.js';
import type { ServiceFile } from '../service/service-file.js';
import { EXIT, cliErrorOf, emit, parseJson, taskRefusal, type Io } from '../cli-io.js';
import { SPEC_FIELDS_HELP } from '../spec-fields.js';
import { command, positional, stringFlag } from '../command.js';

/** How long a writing command waits for the state-root lock another command holds before `state_locked`. */
export const LOCK_WAIT_MS = 5_000;
/** How often it tries again meanwhile. */
const LOCK_POLL_MS = 50;

/**
 * Boots a supervisor on the state root for one command (taking its lock), then stops it. Unless
 * `create` is set, a state root that does not exist is `state_missing` (exit 1) and is not
 * created: a mistyped `--state` must not leave an empty store behind. A file or an unreadable
 * directory is `state_not_directory` / `state_unreadable` either way. A lock another process holds
 * is tried again every 50 ms for `lockWaitMs` (default `LOCK_WAIT_MS`), so two commands started
 * at once answer one after the other, as a service would; past that it is `state_locked`.
 *
 * With `viaService`, a command that writes goes through the service holding the state root
 * (`ordivon serve`, or `ordivon run`'s socket) when its `service.json` names the lock's holder,
 * looked for first and again at each try of the lock: a service that was starting is used once
 * it listens, instead of `state_locked`.
 */
export async function withSupervisor<T>(
  state: string | undefined,
  fn: (sup: Supervisor) => Promise<T>,
  options: { create?: boolean; lockWaitMs?: number; viaService?: (service: ServiceFile) => Promise<T> } = {},
): Promise<T> {
  const [{ createSupervisor }, { HostError }, { StoreError, checkFormat, checkStateRoot, resolveStateRoot }] =
    await Promise.all([
      import('../../kernel/index.js'),
      import('../../kernel/index.js'),
      import('../../store/index.js'),
    ]);
  const { viaService } = options;
  const serviceFor = viaService
    ? (await import('../service/cli-route.js')).serviceFor
    : (_state: string | undefined) => null;
  const first = serviceFor(state);
  if (viaService && first) return viaService(first);
  try {
    const root = resolveStateRoot(state);
    if (options.create) checkStateRoot(root);
    else checkFormat(root, false);
  } catch (error) {
    if (error instanceof StoreError) throw cliErrorOf(error);
    throw error;
  }
  const deadline = performance.now() + (options.lockWaitMs ?? LOCK_WAIT_MS);
  let sup: Supervisor;
  for (;;) {
    sup = createSupervisor({ ...(state ? { state } : {}), purpose: `ordivon cli pid ${process.pid}` });
    try {
      await sup.start();
      break;
    } catch (error) {
      if (error instanceof HostError && error.code === 'state_locked' && performance.now() < deadline) {
        const service = serviceFor(state);
        if (viaService && service) return viaService(service);
        await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
        continue;
      }
      if (error instanceof HostError) throw cliErrorOf(error, { details: { findings: error.findings } });
      throw error;
    }
  }
  try {
    return await fn(sup);
  } finally {
    await sup.stop();
  }
}

/**
 * `ordivon task create --spec FILE`: creates a Task; exit 2 with `invalid_spec` and the field
 * path. The spec is parsed before the state root is touched: a spec that does not parse creates
 * nothing.
 */
export const taskCreate = command({
  name: 'task create',
  summary: 'create a Task from a JSON spec',
  details: [
    SPEC_FIELDS_HELP,
    'A spec that does not parse is invalid_spec (exit 2) with its field path, and nothing is written. While a',
    'service holds the state root, the Task is created through its control API; else the command takes the lock.',
  ],
  flags: {
    spec: stringFlag(
      'FILE',
      'the JSON spec of the Task',
      (z) => z.string({ error: 'required' }).min(1, 'must not be empty'),
      { required: true },
    ),
  },
  async run(values, io) {
    const spec = (await import('../spec-file.js')).readSpecFile(values.spec);
    const [{ HostError }, { parseTaskSpec }, { pinFrozenTests }] = await Promise.all([
      import('../../kernel/index.js'),
      import('../../kernel/index.js'),
      import('../../kernel/index.js'),
    ]);
    try {
      // createTask parses it again; this parse is the one that runs before anything is opened.
      pinFrozenTests(parseTaskSpec(spec));
    } catch (error) {
      if (error instanceof HostError) throw cliErrorOf(error, { exit: EXIT.usage });
      throw error;
    }
    const report = (created: { taskId: string; revision: number }) => {
      emit(io, created, () => `created ${created.taskId} at revision ${created.revision}`);
      return EXIT.ok;
    };
    const { createViaService } = await import('../service/cli-route.js');
    return withSupervisor(
      values.state,
      async (sup) => {
        try {
          return report(await sup.createTask(spec as TaskSpecInput));
        } catch (error) {
          // invalid_spec is malformed input (exit 2); task_exists and the rest are refusals (exit 1).
          if (error instanceof HostError)
            throw cliErrorOf(error, { exit: error.code === 'invalid_spec' ? EXIT.usage : EXIT.failed });
          throw error;
        }
      },
      { create: true, viaService: async (service) => report(await createViaService(service, spec)) },
    );
  },
});

/**
 * `ordivon send TASK_ID EVENT_JSON [--event-id ID]`: sends one external event.
 * Exit 0 admitted, 1 refused or retained with a code, 2 malformed input (nothing written).
 */
export const send = command({
  name: 'send',
  // No list of types here: a usage loads no machines, and an unknown type's refusal lists them.
  summary: 'send an event a caller may send (docs/api.md, "Event payloads"; an unknown type is refused with the list)',
  details: [
    'Exit 0 admitted, 1 refused or retained with a code, 2 malformed input (nothing written). While a service',
    'holds the state root, the event goes through its control API.',
  ],
  positionals: {
    taskId: positional('TASK_ID', 'the Task to send it to'),
    eventJson: positional('EVENT_JSON', 'the event, e.g. \'{"type":"task.cancel","reason":"…"}\''),
  },
  flags: {
    'event-id': stringFlag('ID', 'idempotency key: a retry with the same ID is acknowledged, not written twice', (z) =>
      z.string().min(1, 'must not be empty').optional(),
    ),
  },
  async run(values, io) {
    const { taskId } = values;
    const event = parseJson(values.eventJson, 'EVENT_JSON');
    const { sendViaService } = await import('../service/cli-route.js');
    return withSupervisor(
      values.state,
      async (sup) =>
        reportSend(
          io,
          taskId,
          await sup.sendRaw(taskId, event, values['event-id'] ? { eventId: values['event-id'] } : {}),
        ),
      {
        viaService: async (service) =>
          reportSend(io, taskId, await sendViaService(service, taskId, event, values['event-id'])),
      },
    );
  },
});

/** An admitted event's answer on stdout (exit 0); a refused or retained one is a `taskRefusal` (stderr, exit 1; `invalid_event` 2). */
function reportSend(io: Io, taskId: string, result: SendAnswer): number {
  if (!result.admitted) {
    const { code = 'invalid_transition', detail, path, state, revision, written, duplicate, host, url } = result;
    throw taskRefusal(
      code,
      detail ?? code,
      { taskId, state, revision, written },
      {
        path,
        details: {
          ...(duplicate !== undefined ? { duplicate } : {}),
          ...(host !== undefined ? { host } : {}),
          ...(url !== undefined ? { url } : {}),
        },
      },
    );
  }
  emit(io, { taskId, ...result }, () => `admitted at revision ${result.revision}; task is ${result.state}`);
  return EXIT.ok;
}
