// The DBOS peer of the side-by-side bench (driver-protocol.ts): this process is the DBOS
// application, i.e. the executor. Each Task is a DBOS workflow (workflow id = task id) whose every
// model call and tool call is a DBOS step (DBOS.runStep), checkpointed in the system database on
// the bench's PostgreSQL before the next one starts. `run` starts the Tasks through a DBOS queue
// (its workerConcurrency = config.concurrency); `resume` only launches DBOS, whose launch recovers
// the PENDING workflows of the killed process (and the queue goes on with the ENQUEUED ones), then
// waits for every Task's result; `idle` starts one workflow per Task that waits on DBOS.recv.
//
// Only protocol lines go to stdout: DBOS's logger is replaced by one writing to stderr, and
// console.log/info/debug (DBOS's migration runner prints with console.info) are sent to stderr.
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

const writeOut = process.stdout.write.bind(process.stdout);
const toErr = (...args) =>
  process.stderr.write(args.map((a) => (typeof a === 'string' ? a : inspectSafe(a))).join(' ') + '\n');
function inspectSafe(value) {
  if (value instanceof Error) return value.stack ?? String(value);
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}
console.log = toErr;
console.info = toErr;
console.debug = toErr;
console.warn = toErr;

function emit(line) {
  writeOut(JSON.stringify(line) + '\n');
}

function fail(err) {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`dbos driver: ${err instanceof Error ? err.stack : message}\n`);
  emit({ t: 'error', message });
  process.exit(1);
}
process.on('uncaughtException', fail);
process.on('unhandledRejection', fail);

let config;
try {
  config = JSON.parse(process.argv[2] ?? '');
} catch (err) {
  fail(new Error(`bad config: ${err.message}`));
}
if (!config.postgresUrl) fail(new Error('DBOS needs config.postgresUrl'));

// Phone-home switches: Conductor only starts with a conductorKey or in DBOS Cloud; OTLP only when
// enabled. Make sure neither comes from the environment.
for (const name of Object.keys(process.env))
  if (name.startsWith('DBOS__') || name.startsWith('DBOS_')) delete process.env[name];

const { DBOS } = await import('@dbos-inc/dbos-sdk');
const { callModel, requestMessages, runTools, isDone } = await import('../shared/agent-step.mjs');
const { readFileSync } = await import('node:fs');
const { createRequire } = await import('node:module');
const pg = (await import('pg')).default;

const SDK_VERSION = (() => {
  try {
    const require = createRequire(import.meta.url);
    const file = require.resolve('@dbos-inc/dbos-sdk/package.json');
    return JSON.parse(readFileSync(file, 'utf8')).version;
  } catch {
    return '5.3.0';
  }
})();

/** The system database: one per state folder, so a resume finds the killed run's workflows. */
const dbName = `dbos_bench_${createHash('sha256').update(config.dir).digest('hex').slice(0, 12)}`;
const systemDatabaseUrl = (() => {
  const url = new URL(config.postgresUrl);
  url.pathname = `/${dbName}`;
  return url.toString();
})();

const QUEUE = 'agent_tasks';
/** DBOS queues are polled; the default minimum interval is 1000 ms. */
const QUEUE_POLL_MS = 100;
const DAY_S = 24 * 3600;
/** WFQueueRunner.reconcileIntervalMs in dbos-sdk 5.3.0. */
const QUEUE_RECONCILE_MS = 1000;

const stderrLogger = {
  info: (e) => process.stderr.write(`[dbos info] ${fmt(e)}\n`),
  debug: () => {},
  warn: (e) => process.stderr.write(`[dbos warn] ${fmt(e)}\n`),
  error: (e) => process.stderr.write(`[dbos error] ${fmt(e)}\n`),
};
function fmt(e) {
  if (e instanceof Error) return e.stack ?? e.message;
  return typeof e === 'string' ? e : inspectSafe(e);
}

const workdir = (taskId) => join(config.dir, 'work', taskId);

async function agentFn(taskId, steps) {
  const dir = workdir(taskId);
  mkdirSync(dir, { recursive: true });
  const history = [];
  for (;;) {
    const messages = requestMessages(taskId, steps, history);
    const answer = await DBOS.runStep(() => callModel(config.modelUrl, messages), { name: 'model' });
    if (isDone(answer)) return history.length;
    const output = await DBOS.runStep(() => runTools(dir, answer), { name: 'tool' });
    history.push({ answer, output });
  }
}
const agent = DBOS.registerWorkflow(agentFn, { name: 'agent' });

async function idleFn(taskId) {
  await DBOS.setEvent('waiting', true);
  const message = await DBOS.recv('go', DAY_S);
  return `${taskId}: ${message ?? 'timed out'}`;
}
const idler = DBOS.registerWorkflow(idleFn, { name: 'idle' });

async function serverVersion() {
  const client = new pg.Client({ connectionString: config.postgresUrl });
  await client.connect();
  try {
    const { rows } = await client.query('SHOW server_version');
    const sc = await client.query('SHOW synchronous_commit');
    const fs = await client.query('SHOW fsync');
    return {
      version: rows[0].server_version,
      synchronousCommit: sc.rows[0].synchronous_commit,
      fsync: fs.rows[0].fsync,
    };
  } finally {
    await client.end();
  }
}

function stayUpUntilStdinCloses() {
  return new Promise((resolve) => {
    process.stdin.setEncoding('utf8');
    let buffered = '';
    process.stdin.on('data', (chunk) => {
      buffered += chunk;
      let nl;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl).trim();
        buffered = buffered.slice(nl + 1);
        if (!line) continue;
        let msg;
        try {
          msg = JSON.parse(line);
        } catch {
          process.stderr.write(`dbos driver: ignoring stdin line ${line}\n`);
          continue;
        }
        if (msg.t === 'restart-server')
          // The bench runs PostgreSQL itself; DBOS has no server of its own to restart.
          process.stderr.write("dbos driver: restart-server does not apply to DBOS (PostgreSQL is the bench's)\n");
      }
    });
    process.stdin.on('end', resolve);
    process.stdin.on('close', resolve);
    process.stdin.resume();
  });
}

async function main() {
  // Listen from the start: stdin may close (or carry a line) before the Tasks end.
  const stdinClosed = stayUpUntilStdinCloses();
  DBOS.setConfig({
    name: 'ordivon-bench',
    systemDatabaseUrl,
    // Fixed, so a restarted process recovers the previous one's workflows (the default is a hash of
    // the registered workflows' sources).
    applicationVersion: 'bench-1',
    executorID: 'local',
    logger: stderrLogger,
    logLevel: 'warn',
    enableOTLP: false,
    tracingEnabled: false,
  });
  const pgInfo = await serverVersion();
  const launchStart = performance.now();
  await DBOS.launch();
  const launchMs = performance.now() - launchStart;
  process.stderr.write(`dbos driver: mode ${config.mode}, launch took ${launchMs.toFixed(0)} ms, db ${dbName}\n`);
  let queue;
  if (config.mode !== 'idle') {
    const existed = (await DBOS.retrieveQueue(QUEUE)) !== null;
    queue = await DBOS.registerQueue(QUEUE, {
      workerConcurrency: config.concurrency,
      minPollingIntervalMs: QUEUE_POLL_MS,
      onConflict: 'always_update',
    });
    // A queue registered after launch is only dispatched once the queue runner's next reconcile
    // (every 1 s) finds its row; an application whose queue row exists at launch (any later launch,
    // e.g. resume) dispatches at once. Wait that out before `ready`, so the bench does not time it.
    if (!existed) await new Promise((r) => setTimeout(r, QUEUE_RECONCILE_MS + 2 * QUEUE_POLL_MS));
  }

  emit({
    t: 'ready',
    pids: { executor: process.pid },
    version: `dbos-sdk ${SDK_VERSION}, PostgreSQL ${pgInfo.version}`,
    durability:
      `DBOS defaults: every step's output (and the workflow's status) committed to PostgreSQL in its own ` +
      `transaction before the next step starts; server synchronous_commit=${pgInfo.synchronousCommit}, fsync=${pgInfo.fsync}` +
      (queue
        ? `; Tasks started through a DBOS queue (workerConcurrency=${config.concurrency}, polled every ${QUEUE_POLL_MS} ms)`
        : ''),
  });

  if (config.mode === 'run') {
    const handles = [];
    for (const taskId of config.tasks) {
      handles.push(await DBOS.startWorkflow(agent, { workflowID: taskId, queueName: QUEUE })(taskId, config.steps));
    }
    await Promise.all(handles.map((h) => h.getResult()));
    emit({ t: 'done', ended: handles.length });
  } else if (config.mode === 'resume') {
    const t0 = performance.now();
    // Workflows the killed process had recorded are recovered by launch (PENDING) or dispatched by
    // the queue (ENQUEUED); a Task it never got to enqueue is started here.
    let started = 0;
    const handles = [];
    for (const id of config.tasks) {
      if ((await DBOS.getWorkflowStatus(id)) === null) {
        started++;
        handles.push(await DBOS.startWorkflow(agent, { workflowID: id, queueName: QUEUE })(id, config.steps));
      } else handles.push(DBOS.retrieveWorkflow(id));
    }
    if (started) process.stderr.write(`dbos driver: resume: ${started} Tasks had no workflow yet, started them\n`);
    const results = await Promise.all(handles.map((h) => h.getResult()));
    process.stderr.write(
      `dbos driver: resume: ${results.length} Tasks ended ${(performance.now() - t0).toFixed(0)} ms after launch\n`,
    );
    emit({ t: 'done', ended: results.length });
  } else if (config.mode === 'idle') {
    const ids = config.tasks.map((id) => `idle-${id}`);
    for (let i = 0; i < ids.length; i++) await DBOS.startWorkflow(idler, { workflowID: ids[i] })(config.tasks[i]);
    for (const id of ids) {
      const waiting = await DBOS.getEvent(id, 'waiting', 120);
      if (waiting !== true) throw new Error(`idle workflow ${id} did not reach its wait`);
    }
    emit({ t: 'idle', tasks: ids.length });
  } else {
    throw new Error(`unknown mode ${config.mode}`);
  }

  await stdinClosed;
  // Idle workflows stay PENDING in the database; shutdown does not wait for them.
  await DBOS.shutdown({ workflowCompletionTimeoutMS: 0 }).catch((err) =>
    process.stderr.write(`dbos driver: shutdown: ${err}\n`),
  );
  process.exit(0);
}

main().catch(fail);
