/**
 * The demo's Task against REAL providers: Codex (`codex app-server`, a real model through your
 * OpenAI key) diagnoses, Hermes (`hermes acp`, through your OpenRouter key) repairs — or the reverse
 * with `--order hermes-first`. Same workload, same Host, same drivers as `npm start`; only the
 * harness configuration differs. It costs real tokens, so it never runs in the tests.
 *
 *   OPENAI_API_KEY=… OPENROUTER_API_KEY=… node dist/examples/real-providers.js --state ./.ordivon-real
 *
 * The environment is parsed with zod first: a missing key or binary stops it with `config_invalid`
 * naming the variable, before anything is written. Each provider gets only the variables listed
 * here (not this process's whole environment); the keys are passed by name (`envFrom`). Afterwards: `ordivon show TASK_ID --events`.
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { zodIssue } from '../base/index.js';
import { openHost, taskRuns, type HarnessConfig } from '../index.js';
import { loadWorkload } from '../cli/workload.js';

const Env = z.object({
  PATH: z.string().min(1),
  HOME: z.string().min(1),
  OPENAI_API_KEY: z.string({ error: 'required: codex app-server calls the OpenAI API with it' }).min(1),
  OPENROUTER_API_KEY: z.string({ error: 'required: hermes acp calls OpenRouter with it' }).min(1),
  CODEX_BIN: z.string().min(1).default('codex'),
  HERMES_BIN: z.string().min(1).default('hermes'),
});
const env = Env.safeParse(process.env);
if (!env.success) {
  const { code, path, message } = zodIssue('config_invalid', env.error);
  console.error(`${code}: ${path}: ${message}`);
  process.exit(2);
}
const { values } = parseArgs({
  options: { state: { type: 'string', default: './.ordivon-real' }, order: { type: 'string', default: 'codex-first' } },
});
const order = z.enum(['codex-first', 'hermes-first']).safeParse(values.order);
if (!order.success) {
  console.error('usage: --order must be codex-first or hermes-first');
  process.exit(2);
}

const { PATH, HOME } = env.data;
const harnesses: Record<string, HarnessConfig> = {
  codex: {
    driver: 'codex',
    command: env.data.CODEX_BIN,
    args: ['app-server'],
    env: { PATH, HOME },
    // By name: the driver pool's worker reads the key when it spawns the provider, so it is never stored.
    envFrom: ['OPENAI_API_KEY'],
    timeoutMs: 20 * 60_000,
  },
  hermes: {
    driver: 'acp',
    command: env.data.HERMES_BIN,
    args: ['acp'],
    env: { PATH, HOME },
    envFrom: ['OPENROUTER_API_KEY'],
    timeoutMs: 20 * 60_000,
  },
};
const [first, second] = order.data === 'codex-first' ? ['codex', 'hermes'] : ['hermes', 'codex'];

const host = await openHost({
  state: values.state,
  harnesses,
  onStep: (taskId, step) => console.error(`[${taskId.slice(0, 13)}] ${step}`),
});
try {
  const workload = loadWorkload('hamilton-v1');
  const { taskId } = await host.supervisor.createTask(workload.spec);
  await host.supervisor.send(taskId, { type: 'assignment.commit', harness: first, purpose: 'diagnose' });
  await host.supervisor.waitFor(taskId, ['waiting']);
  await host.supervisor.send(taskId, { type: 'assignment.commit', harness: second, purpose: 'repair' });
  const rest = await host.supervisor.waitFor(taskId, ['completed', 'waiting']);
  const runs = taskRuns({ events: host.supervisor.events(taskId), object: (d) => host.supervisor.getObject(d).body });
  console.log(
    JSON.stringify({ taskId, state: rest, context: host.supervisor.getTask(taskId)?.context, runs }, null, 2),
  );
  process.exitCode = rest === 'completed' ? 0 : 1;
} finally {
  await host.stop();
}
