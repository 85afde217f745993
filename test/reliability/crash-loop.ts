import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { createSupervisor } from '../../kernel/supervisor.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { rebuildAll } from '../../recovery/rebuild.js';
import { EventStore } from '../../store/index.js';
import { seededRandom } from './seeded-random.js';

const WRITER = fileURLToPath(new URL('../fixtures/reliability/crash-writer.js', import.meta.url));

export interface CrashLoopOptions {
  root: string;
  rounds: number;
  seed: number;
  /** Concurrent Tasks (lanes) in the writer. */
  tasks?: number;
  /** The kill comes after a random number of stdout lines in [1, maxLines]. */
  maxLines?: number;
  onRound?: (round: RoundResult) => void;
}

export interface RoundResult {
  round: number;
  killAt: number;
  acknowledged: number;
  /** Every (taskId, revision, eventId) acknowledged so far that is absent or differs. */
  lost: string[];
  /** Findings of boot (fresh supervisor) and of `rebuildAll`, gaps included. */
  problems: string[];
  tasks: number;
  events: number;
}

export interface CrashLoopSummary {
  rounds: number;
  kills: number;
  acknowledged: number;
  lost: number;
  problems: string[];
  events: number;
  tasks: number;
}

/**
 * Runs the crash loop: each round spawns the writer on `root`, SIGKILLs it after a seeded random
 * number of stdout lines, then boots a fresh supervisor on the same root and checks that every
 * acknowledged event is stored with its id, that no stream has a gap and that the projections
 * equal replay. Never sleeps: the kill moment is a line count.
 */
export async function runCrashLoop(options: CrashLoopOptions): Promise<CrashLoopSummary> {
  const random = seededRandom(options.seed);
  const acked = new Map<string, string>(); // `${taskId} ${revision}` → eventId
  let kills = 0;
  const problems: string[] = [];
  let last = { events: 0, tasks: 0 };
  for (let round = 1; round <= options.rounds; round++) {
    const killAt = 1 + Math.floor(random() * (options.maxLines ?? 400));
    const lines = await killAfter(options.root, options.seed * 10_000 + round, options.tasks ?? 20, killAt);
    if (lines.killed) kills++;
    else problems.push(`round ${round}: the writer exited on its own (${lines.exit}): ${lines.stderr.slice(-2000)}`);
    for (const line of lines.acks) acked.set(`${line.taskId} ${line.revision}`, line.eventId);
    const result = await checkRoot(options.root, acked);
    const outcome: RoundResult = { round, killAt, acknowledged: acked.size, ...result };
    problems.push(
      ...result.problems.map((p) => `round ${round}: ${p}`),
      ...result.lost.map((l) => `round ${round}: lost ${l}`),
    );
    last = { events: result.events, tasks: result.tasks };
    options.onRound?.(outcome);
    if (problems.length > 0) break;
  }
  return {
    rounds: options.rounds,
    kills,
    acknowledged: acked.size,
    lost: problems.filter((p) => p.includes(': lost ')).length,
    problems,
    ...last,
  };
}

interface WriterRun {
  killed: boolean;
  exit: string;
  stderr: string;
  acks: Array<{ taskId: string; revision: number; eventId: string }>;
}

/** Spawns the writer and SIGKILLs it once `killAt` stdout lines have arrived; collects every ack line it printed. */
function killAfter(root: string, seed: number, tasks: number, killAt: number): Promise<WriterRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WRITER, root, String(seed), String(tasks)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const acks: WriterRun['acks'] = [];
    let seen = 0;
    let killed = false;
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      seen++;
      const m = /^ack (\S+) (\d+) (\S+)$/.exec(line);
      if (m) acks.push({ taskId: m[1]!, revision: Number(m[2]), eventId: m[3]! });
      if (seen >= killAt && !killed) killed = child.kill('SIGKILL');
    });
    child.on('error', reject);
    // 'close' fires after stdout ended: every line the writer printed before dying is counted.
    child.on('close', (code, signal) =>
      resolve({ killed: killed && signal === 'SIGKILL', exit: `${code ?? signal}`, stderr, acks }),
    );
  });
}

/** Boots a fresh supervisor on the root (full validation), then re-checks every acknowledgement read-only. */
async function checkRoot(
  root: string,
  acked: Map<string, string>,
): Promise<Pick<RoundResult, 'lost' | 'problems' | 'tasks' | 'events'>> {
  const problems: string[] = [];
  const sup = createSupervisor({ state: root, purpose: 'crash-loop check' });
  try {
    await sup.start();
  } catch (error) {
    problems.push(`boot failed: ${(error as Error).message}`);
  }
  await sup.stop();
  const store = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
  try {
    const report = rebuildAll(store);
    problems.push(...report.findings.map((f) => `${f.code} task=${f.taskId} revision=${f.revision}: ${f.message}`));
    for (const taskId of store.taskIds()) {
      const head = store.head(taskId)!;
      let expected = 1;
      for (const { revision } of store.rawStream(taskId)) {
        if (revision !== expected)
          problems.push(`gap in ${taskId}: revision ${revision} where ${expected} was expected`);
        expected = revision + 1;
      }
      if (expected - 1 !== head.revision) problems.push(`${taskId}: head ${head.revision}, last event ${expected - 1}`);
    }
    const lost: string[] = [];
    for (const [key, eventId] of acked) {
      const [taskId, revision] = key.split(' ') as [string, string];
      const event = store.event(taskId, Number(revision));
      const same = eventId === 'task.created' ? event?.type === 'task.created' : event?.id === eventId;
      if (!same) lost.push(`${key} ${eventId} (stored: ${event ? `${event.type} ${event.id}` : 'nothing'})`);
    }
    return { lost, problems, tasks: report.tasks.length, events: report.events };
  } finally {
    await store.close();
  }
}
