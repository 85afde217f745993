import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { loadWorkload } from '../../cli/workload.js';
import { comparedWorkloads, type ComparedWorkload, type StagePlan } from './plans.js';
import { VARIANTS, harnessOf, startStageModel, type SeenRequest, type StageModel, type Variant } from './variants.js';

/**
 * The comparison the Loop v0 issue asks for: each frozen workload done by each variant (the
 * one-shot gateway, Loop v0, the real Codex app-server, the real opencode), each against its own
 * loopback scripted model speaking the real wire format, through `ordivon run` (a child process,
 * so it can be SIGKILLed). Per variant and workload, three Tasks:
 * - honest: every stage's agent does the work; the Task should complete;
 * - false: the last stage's agent claims success without the deliverable admission requires;
 * - killed: the kill stage's third model request (the gateway's only one) is held, `ordivon run`
 *   is SIGKILLed while it waits, and run again; what it then cost over the honest Task is what
 *   the kill cost.
 */

const CLI = fileURLToPath(new URL('../../cli/ordivon.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The position whose first request is held in the kill stage: after two tool calls (the gateway has one call only). */
const KILL_AT = 2;
/** Characters per token for the estimate (the scripted models count no tokens of their own). */
export const CHARS_PER_TOKEN = 4;

export type TaskKind = 'honest' | 'false' | 'killed';

/** What one Task cost, counted at its models. */
export interface TaskCost {
  completed: boolean;
  /** The refusal `ordivon run` printed when the Task did not complete. */
  code?: string;
  /** Model requests, the held one included. */
  modelCalls: number;
  /** Requests answered: model turns taken. */
  turns: number;
  /** Tool calls whose result reached the model (one count per conversation a harness held). */
  toolCalls: number;
  /** Estimated tokens of the answered requests and their answers. */
  tokens: number;
  wallMs: number;
}

export interface VariantRow {
  workload: ComparedWorkload['name'];
  variant: Variant;
  honest: TaskCost;
  false: TaskCost;
  killed: TaskCost;
  /** What the kill cost over the honest Task. */
  again: { turns: number; toolCalls: number; tokens: number };
}

export interface CompareResults {
  what: 'loop-compare';
  date: string;
  /** The wall times are one run's on this machine, under the load it had (1-minute load average before and after). */
  machine: { node: string; cpus: number; loadAverageBefore: number; loadAverageAfter: number };
  charsPerToken: number;
  rows: VariantRow[];
  /** Lines of code each path needs in this repository (non-blank, not only a comment). */
  permanentLines: Record<Variant, { lines: number; paths: string[] }>;
}

/** Sums what the stage models saw: calls, turns, tool calls per conversation, estimated tokens. */
export function costOf(seen: readonly SeenRequest[]): Omit<TaskCost, 'completed' | 'wallMs'> {
  let toolCalls = 0;
  let conversation = 0;
  for (const r of seen) {
    if (r.index < 0) continue;
    if (r.index === 0) {
      toolCalls += conversation;
      conversation = 0;
    }
    conversation = Math.max(conversation, r.toolResults);
  }
  toolCalls += conversation;
  const answered = seen.filter((r) => r.answered);
  const chars = answered.reduce((sum, r) => sum + r.requestChars + r.answerChars, 0);
  return {
    modelCalls: seen.length,
    turns: answered.filter((r) => r.index >= 0).length,
    toolCalls,
    tokens: Math.round(chars / CHARS_PER_TOKEN),
  };
}

interface RunOptions {
  dir: string;
  timeoutMs: number;
  log: (line: string) => void;
}

/** One Task of `kind` by `variant` through `ordivon run`; the models are stopped before it resolves. */
async function runTask(workload: ComparedWorkload, variant: Variant, kind: TaskKind, o: RunOptions): Promise<TaskCost> {
  const dir = join(o.dir, workload.name, variant, kind);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const last = workload.stages.at(-1)!.name;
  const models = new Map<string, StageModel>();
  let ended: Pick<TaskCost, 'completed' | 'code' | 'wallMs'>;
  try {
    for (const { name, plan } of workload.stages) {
      const used: StagePlan = kind === 'false' && name === last ? workload.falseClaim : plan;
      const hold = kind === 'killed' && name === workload.killStage ? (variant === 'gateway' ? 0 : KILL_AT) : undefined;
      models.set(name, await startStageModel(variant, used, hold));
    }
    const harnesses = Object.fromEntries(
      [...models].map(([stage, m]) => [stage, harnessOf(variant, m.url, join(dir, `home-${stage}`), o.timeoutMs)]),
    );
    writeFileSync(join(dir, 'ordivon.config.json'), JSON.stringify({ harnesses }, null, 2));
    const { spec } = loadWorkload(workload.name);
    writeFileSync(join(dir, 'task.json'), JSON.stringify(spec, null, 2));
    const args = [
      ...['run', '--state', join(dir, 'state'), '--config', join(dir, 'ordivon.config.json')],
      ...['--spec', join(dir, 'task.json'), '--task', `${workload.name}-${variant}-${kind}`, '--quiet', '--json'],
      ...['--stages', workload.stages.map((s) => `${s.name}=${s.name}`).join(',')],
    ];
    const started = performance.now();
    if (kind === 'killed') {
      const held = models.get(workload.killStage)!.held;
      const signal = await killedRun(args, held);
      if (signal !== 'SIGKILL') throw new Error(`${workload.name}/${variant}: ordivon run ended before its kill`);
    }
    const r = await execa(process.execPath, [CLI, ...args], { reject: false, stdin: 'ignore', cwd: dir });
    const wallMs = performance.now() - started;
    const completed = r.exitCode === 0 && (JSON.parse(r.stdout) as { completed?: unknown }).completed === true;
    const code = completed ? undefined : errorCode(r.stderr);
    if (kind !== 'false' && !completed) o.log(`  ${workload.name}/${variant}/${kind}: not completed\n${r.stderr}`);
    ended = { completed, ...(code ? { code } : {}), wallMs };
  } finally {
    await Promise.all([...models.values()].map((m) => m.close()));
  }
  return { ...ended, ...costOf([...models.values()].flatMap((m) => m.seen)) };
}

/** The code of `ordivon run --json`'s error, the last JSON line on its stderr. */
function errorCode(stderr: string): string {
  for (const line of stderr.trim().split('\n').reverse()) {
    try {
      const code = (JSON.parse(line) as { error?: { code?: unknown } }).error?.code;
      if (typeof code === 'string') return code;
    } catch {
      // a progress line
    }
  }
  return 'unknown';
}

/** Starts `ordivon run` and SIGKILLs it once `when` resolves; resolves with the signal it ended by. */
function killedRun(args: string[], when: Promise<void>): Promise<NodeJS.Signals | null> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: 'ignore' });
  void when.then(() => child.kill('SIGKILL'));
  return new Promise((resolve) => child.once('close', (_code, signal) => resolve(signal)));
}

/** Lines of code under `paths` (relative to the repository): non-blank, not only a comment. Empty without the sources (an installed package). */
function linesOf(paths: string[]): number {
  const count = (file: string): number =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => {
        const t = l.trim();
        return t !== '' && !t.startsWith('//') && !t.startsWith('*') && !t.startsWith('/*');
      }).length;
  const walk = (path: string): number =>
    statSync(path).isDirectory()
      ? readdirSync(path).reduce((sum, name) => sum + walk(join(path, name)), 0)
      : path.endsWith('.ts') && !path.endsWith('.d.ts')
        ? count(path)
        : 0;
  return paths.reduce((sum, p) => sum + walk(join(ROOT, p)), 0);
}

/** What each path needs of this repository's code, beside what every harness shares (the Host, the `command` driver's Runtime). */
const PERMANENT: Record<Variant, string[]> = {
  gateway: ['workloads/loop-compare/gateway-agent.ts', 'drivers/loop/wire', 'drivers/loop/conversation.ts'],
  loop: ['drivers/loop'],
  codex: ['drivers/codex'],
  opencode: ['drivers/acp'],
};

/** Runs the comparison: every workload × variant × kind, in turn. */
export async function runComparison(options: {
  dir: string;
  workloads?: readonly ComparedWorkload['name'][];
  variants?: readonly Variant[];
  timeoutMs?: number;
  log: (line: string) => void;
}): Promise<CompareResults> {
  const loadAverageBefore = loadavg()[0]!;
  const o: RunOptions = { dir: options.dir, timeoutMs: options.timeoutMs ?? 180_000, log: options.log };
  const rows: VariantRow[] = [];
  for (const workload of comparedWorkloads().filter((w) => options.workloads?.includes(w.name) ?? true)) {
    for (const variant of options.variants ?? VARIANTS) {
      options.log(`ordivon demo: ${workload.name} with ${variant}…`);
      const honest = await runTask(workload, variant, 'honest', o);
      const falseClaim = await runTask(workload, variant, 'false', o);
      const killed = await runTask(workload, variant, 'killed', o);
      rows.push({
        workload: workload.name,
        variant,
        honest,
        false: falseClaim,
        killed,
        again: {
          turns: killed.turns - honest.turns,
          toolCalls: killed.toolCalls - honest.toolCalls,
          tokens: killed.tokens - honest.tokens,
        },
      });
    }
  }
  const permanentLines = Object.fromEntries(
    VARIANTS.map((v) => [v, { lines: linesOf(PERMANENT[v]), paths: PERMANENT[v] }]),
  ) as CompareResults['permanentLines'];
  return {
    what: 'loop-compare',
    date: new Date().toISOString(),
    machine: { node: process.version, cpus: cpus().length, loadAverageBefore, loadAverageAfter: loadavg()[0]! },
    charsPerToken: CHARS_PER_TOKEN,
    rows,
    permanentLines,
  };
}

/** The comparison as one table, a row per workload and variant. */
export function comparisonTable(results: CompareResults): string {
  const head = [
    'workload',
    'variant',
    'completed',
    'false refused',
    'calls',
    'turns',
    'tools',
    'tokens~',
    'wall s',
    'after SIGKILL: turns again',
    'tools again',
    'tokens again~',
  ];
  const rows = results.rows.map((r) => [
    r.workload,
    r.variant,
    r.honest.completed && r.killed.completed ? 'yes' : 'NO',
    r.false.completed ? 'NO (admitted)' : `yes (${r.false.code ?? '?'})`,
    String(r.honest.modelCalls),
    String(r.honest.turns),
    String(r.honest.toolCalls),
    String(r.honest.tokens),
    (r.honest.wallMs / 1000).toFixed(1),
    String(r.again.turns),
    String(r.again.toolCalls),
    String(r.again.tokens),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  const lines = Object.entries(results.permanentLines).map(
    ([v, { lines, paths }]) => `  ${v.padEnd(9)} ${String(lines).padStart(5)} lines (${paths.join(', ')})`,
  );
  return [
    line(head),
    ...rows.map(line),
    `tokens~: estimated at ${results.charsPerToken} characters a token from what each harness sent and received`,
    'permanent code each path needs in this repository:',
    ...lines,
  ].join('\n');
}
