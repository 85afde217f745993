// LangGraph JS peer of the side-by-side bench (bench/peers/driver-protocol.ts): plain ESM
// JavaScript, run from .peers/langgraph/run/langgraph/ so bare imports resolve from
// .peers/langgraph/node_modules and the shared step from ../shared/.
//
// In-process: this process is the executor. One StateGraph (model → tool → model … → END), one
// SqliteSaver on <dir>/checkpoints.sqlite, one thread per Task (thread_id = taskId).
//
// State kept bounded: the graph state holds the Task's identity, a step counter, the last answer
// and only the last HISTORY_STEPS (3) `{answer, output}` steps, which is all a request sends. So
// each checkpoint (a full snapshot of the state per super-step) stays ~4 × payload in size
// whatever the number of steps; the SQLite file still keeps one checkpoint per super-step
// (LangGraph OSS never prunes them), i.e. it grows linearly in steps, not quadratically.
//
// Durability: `config.durability` is passed as the invoke option `durability` ("sync": each
// checkpoint written before the next step starts; LangGraph's default "async": written while
// the next step already runs). `config.syncFull` sets `PRAGMA synchronous=FULL` on the
// checkpointer's connection (better-sqlite3 in WAL mode defaults to NORMAL: commits not fsynced).
//
// Recovery (`resume`): LangGraph OSS has no automatic recovery. As its docs tell a user: for each
// thread, getState(); if it has `next` nodes resume it with invoke(null); if it has no checkpoint,
// start it; if it ended, skip it.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Annotation, END, START, StateGraph, interrupt } from '@langchain/langgraph';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { HISTORY_STEPS, callModel, isDone, requestMessages, runTools } from '../shared/agent-step.mjs';

const VERSION = '@langchain/langgraph 1.7.3, checkpoint-sqlite 1.0.4';

// Nothing but protocol lines on stdout: route any console.log/info/debug of a library to stderr.
const stdoutWrite = process.stdout.write.bind(process.stdout);
console.log = console.info = console.debug = (...args) => console.error(...args);
function emit(line) {
  stdoutWrite(`${JSON.stringify(line)}\n`);
}
function log(...args) {
  console.error('[langgraph-driver]', ...args);
}

let failed = false;
function fail(error) {
  if (failed) return;
  failed = true;
  const message = error instanceof Error ? `${error.message}\n${error.stack ?? ''}` : String(error);
  emit({ t: 'error', message });
  // Let stdout drain, then exit 1.
  process.stdout.write('', () => process.exit(1));
  setTimeout(() => process.exit(1), 500).unref();
}
process.on('uncaughtException', fail);
process.on('unhandledRejection', fail);

const last = (_old, value) => value;
const State = Annotation.Root({
  taskId: Annotation({ reducer: last, default: () => '' }),
  steps: Annotation({ reducer: last, default: () => 0 }),
  /** Steps whose tool has run. */
  stepsDone: Annotation({ reducer: last, default: () => 0 }),
  /** The model's latest answer (`{content, toolCalls}`), set by `model`, used by `tool`. */
  answer: Annotation({ reducer: last, default: () => null }),
  /** The last HISTORY_STEPS `{answer, output}` steps only (bounded state). */
  history: Annotation({ reducer: last, default: () => [] }),
  /** Set by `wait` (idle graph) when resumed. */
  approved: Annotation({ reducer: last, default: () => false }),
});

function buildGraph({ modelUrl, dir, checkpointer, waitFirst }) {
  const model = async (state) => {
    const answer = await callModel(modelUrl, requestMessages(state.taskId, state.steps, state.history));
    return { answer };
  };
  const tool = async (state) => {
    const workdir = join(dir, 'work', state.taskId);
    mkdirSync(workdir, { recursive: true });
    const output = await runTools(workdir, state.answer);
    const history = [...state.history, { answer: state.answer, output }].slice(-HISTORY_STEPS);
    return { history, stepsDone: state.stepsDone + 1 };
  };
  const builder = new StateGraph(State)
    .addNode('model', model)
    .addNode('tool', tool)
    .addConditionalEdges('model', (state) => (isDone(state.answer) ? END : 'tool'), ['tool', END])
    .addEdge('tool', 'model');
  if (waitFirst) {
    // Idle: the thread's first node waits for a resume (an approval) that never comes.
    builder
      .addNode('wait', () => {
        const value = interrupt({ question: 'approve this Task?' });
        return { approved: Boolean(value) };
      })
      .addEdge(START, 'wait')
      .addEdge('wait', 'model');
  } else {
    builder.addEdge(START, 'model');
  }
  return builder.compile({ checkpointer });
}

async function pool(items, concurrency, worker) {
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++];
      await worker(item);
    }
  });
  await Promise.all(lanes);
}

async function main() {
  const config = JSON.parse(process.argv[2] ?? '');
  const { mode, dir, modelUrl, tasks, steps, concurrency } = config;
  if (!['run', 'resume', 'idle'].includes(mode)) throw new Error(`unknown mode ${mode}`);
  const durability = config.durability ?? 'async';
  mkdirSync(join(dir, 'work'), { recursive: true });

  const checkpointer = SqliteSaver.fromConnString(join(dir, 'checkpoints.sqlite'));
  checkpointer.setup(); // WAL mode + tables; set synchronous after it (switching to WAL resets it)
  if (config.syncFull) checkpointer.db.pragma('synchronous = FULL');
  const synchronous = checkpointer.db.pragma('synchronous', { simple: true });
  const syncName = ['OFF', 'NORMAL', 'FULL', 'EXTRA'][synchronous] ?? String(synchronous);
  const durabilityWords = [
    durability === 'sync'
      ? 'durability=sync (each checkpoint written before the next step)'
      : 'durability=async (default: checkpoint written while the next step runs)',
    syncName === 'FULL' || syncName === 'EXTRA'
      ? `SQLite WAL, PRAGMA synchronous=${syncName} (fsync per commit)`
      : `SQLite WAL, synchronous=${syncName}${config.syncFull ? '' : ' (default)'} (commits not fsynced)`,
  ].join(', ');

  const graph = buildGraph({ modelUrl, dir, checkpointer, waitFirst: mode === 'idle' });
  // 2 super-steps per step (model, tool) + the final model call + the idle wait + margin.
  const recursionLimit = 2 * steps + 10;
  const options = (taskId) => ({ configurable: { thread_id: taskId }, durability, recursionLimit });
  const input = (taskId) => ({ taskId, steps, stepsDone: 0, answer: null, history: [] });

  process.stdin.on('data', (chunk) => {
    for (const line of String(chunk).split('\n')) {
      if (line.trim()) log('ignoring stdin line (LangGraph has no server):', line.trim());
    }
  });
  // Stdin closing is the bench's signal to stop; if it closes before `done`/`idle`, finish first.
  let stdinClosed = false;
  let finished = false;
  const closed = () => {
    stdinClosed = true;
    if (finished) process.exit(0);
  };
  process.stdin.on('end', closed);
  process.stdin.on('error', closed);
  process.stdin.resume();

  emit({ t: 'ready', pids: { executor: process.pid }, version: VERSION, durability: durabilityWords });

  if (mode === 'run') {
    let ended = 0;
    await pool(tasks, concurrency, async (taskId) => {
      await graph.invoke(input(taskId), options(taskId));
      ended++;
    });
    emit({ t: 'done', ended });
  } else if (mode === 'resume') {
    let ended = 0;
    const counts = { resumed: 0, resumedWithoutNext: 0, started: 0, skipped: 0 };
    await pool(tasks, concurrency, async (taskId) => {
      const snapshot = await graph.getState({ configurable: { thread_id: taskId } });
      if (snapshot.createdAt === undefined) {
        counts.started++;
        await graph.invoke(input(taskId), options(taskId));
      } else if (snapshot.next.length > 0) {
        counts.resumed++;
        await graph.invoke(null, options(taskId));
      } else if (!(snapshot.values.answer && isDone(snapshot.values.answer))) {
        // `next` is empty but the Task has not ended. With durability "async" a kill can land
        // after a node's writes were saved (pending writes on checkpoint N) but before
        // checkpoint N+1 was (its put still in flight while the next node ran): getState()
        // then counts that node as done and computes no next node. invoke(null) still
        // continues correctly (applies the pending writes, runs the next node), so resume such
        // a thread too rather than trusting `next` alone.
        counts.resumedWithoutNext++;
        await graph.invoke(null, options(taskId));
      } else {
        counts.skipped++;
      }
      ended++;
    });
    log('resume:', JSON.stringify(counts));
    emit({ t: 'done', ended });
  } else {
    let waiting = 0;
    await pool(tasks, concurrency, async (taskId) => {
      await graph.invoke(input(taskId), options(taskId));
      const snapshot = await graph.getState({ configurable: { thread_id: taskId } });
      if (!snapshot.next.includes('wait')) throw new Error(`task ${taskId} is not waiting: ${snapshot.next}`);
      waiting++;
    });
    emit({ t: 'idle', tasks: waiting });
  }
  finished = true;
  if (stdinClosed) process.exit(0);
}

main().catch(fail);
