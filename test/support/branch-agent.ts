import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The agents behind the branch tests, one `command` harness per mode, each a real process in its
 * own workspace: `right` makes `x` 2 (what acceptance checks) and writes report.md, `wrong` makes
 * it 3, `gated` waits for the test to open its gate (a FIFO) and then does what `right` does,
 * `hang` never ends, `item` writes `fixed/<item>.txt` for the `ITEM=<item>` its prompt names,
 * `list` writes items.json from `LIST`. Each run appends its mode to `marks/runs`; `hang` writes a
 * file `marks/hang-<uuid>`. Runs confined: the gate is readable, the marks writable.
 */
const AGENT = `
const fs = require('node:fs');
const mode = process.argv[2];
const prompt = fs.readFileSync(0, 'utf8');
const marks = process.env.MARKS;
fs.appendFileSync(marks + '/runs', mode + '\\n');
const write = (x, who) => {
  fs.writeFileSync('a.js', 'export const x = ' + x + ';\\n');
  fs.writeFileSync('report.md', '# fixed by ' + who + '\\n');
};
if (mode === 'right' || mode === 'right2') write(2, mode);
else if (mode === 'wrong') write(3, mode);
else if (mode === 'gated') { fs.readFileSync(process.env.GATE); write(2, mode); }
else if (mode === 'hang') {
  // A confined run has a pid namespace of its own: its pid is not unique across runs.
  fs.writeFileSync(marks + '/hang-' + require('node:crypto').randomUUID(), String(process.pid));
  setInterval(() => {}, 1 << 30);
} else if (mode === 'item') {
  const item = /ITEM=([A-Za-z0-9_-]+)/.exec(prompt)[1];
  if (item === process.env.GATED_ITEM) fs.readFileSync(process.env.GATE);
  fs.mkdirSync('fixed', { recursive: true });
  fs.writeFileSync('fixed/' + item + '.txt', 'fixed ' + item + '\\n');
} else if (mode === 'list') fs.writeFileSync('items.json', process.env.LIST);
`;

export const ACCEPT_X2 = {
  command: process.execPath,
  args: ['-e', "import('./a.js').then((m) => process.exit(m.x === 2 ? 0 : 1))"],
};

export interface BranchAgents {
  dir: string;
  seed: string;
  /** The harness running the agent in `mode` (extra environment for `item` and `list`). */
  harness(mode: string, env?: Record<string, string>): Record<string, unknown>;
  /** Every mode as a harness of that name. */
  harnesses(env?: Record<string, string>): Record<string, Record<string, unknown>>;
  /**
   * Lets the runs waiting at the gate go on (one per call): resolves once a run has read it, true.
   * Aborted first (no run came to the gate), false and the gate stays shut.
   */
  open(signal?: AbortSignal): Promise<boolean>;
  /** Resolves once `n` runs of `hang` are running. */
  hanging(n: number): Promise<void>;
  /** Resolves once `n` runs of `mode` have started (each appends its mode to `marks/runs` first). */
  started(mode: string, n: number): Promise<void>;
  /** The modes of every run, in the order they started. */
  runs(): string[];
}

export function branchAgents(dir: string): BranchAgents {
  const seed = join(dir, 'seed');
  const marks = join(dir, 'marks');
  mkdirSync(seed);
  mkdirSync(marks);
  mkdirSync(join(dir, 'gate'));
  writeFileSync(join(seed, 'a.js'), 'export const x = 1;\n');
  writeFileSync(join(dir, 'agent.cjs'), AGENT);
  const gate = join(dir, 'gate', 'go');
  execFileSync('mkfifo', [gate]);
  const hangs = () => readdirSync(marks).filter((f) => f.startsWith('hang-'));
  const runs = () =>
    existsSync(join(marks, 'runs')) ? readFileSync(join(marks, 'runs'), 'utf8').split('\n').filter(Boolean) : [];
  // Resolves once `done()` holds, checked now and at each change in the marks folder.
  const marked = (done: () => boolean) =>
    new Promise<void>((resolve) => {
      const watcher = watch(marks, () => check());
      const check = () => {
        if (done()) {
          watcher.close();
          resolve();
        }
      };
      check();
    });
  const harness = (mode: string, env: Record<string, string> = {}) => ({
    driver: 'command',
    command: process.execPath,
    args: [join(dir, 'agent.cjs'), mode],
    env: { MARKS: marks, GATE: gate, ...env },
    readable: [join(dir, 'gate')],
    writable: [marks],
    timeoutMs: 600_000,
  });
  return {
    dir,
    seed,
    harness,
    harnesses: (env = {}) =>
      Object.fromEntries(
        ['right', 'right2', 'wrong', 'gated', 'hang', 'item', 'list'].map((mode) => [mode, harness(mode, env)]),
      ),
    // A child process writes the FIFO: its open waits for a reader and can be killed when none comes.
    // An open blocked in this process's own thread pool could not be undone and would keep it alive.
    open: (signal) =>
      new Promise<boolean>((resolve, reject) => {
        const writer = spawn('/bin/sh', ['-c', 'printf "go\\n" > "$0"', gate], { stdio: 'ignore', signal });
        writer.once('error', (error) => (error.name === 'AbortError' ? resolve(false) : reject(error)));
        writer.once('exit', (code) =>
          code === 0 ? resolve(true) : !signal?.aborted && reject(new Error(`gate writer exited ${code}`)),
        );
      }),
    hanging: (n) => marked(() => hangs().length >= n),
    started: (mode, n) => marked(() => runs().filter((m) => m === mode).length >= n),
    runs,
  };
}

/** A Task whose `list` stage writes items.json and whose `fix` stage fans out one child per item, joined `join`. */
export function fanOutSpec(agents: BranchAgents, taskId: string, join: 'all' | 'any' | { atLeast: number } = 'all') {
  return {
    taskId,
    title: 'Fix each listed defect',
    goal: 'List the defects, then fix each in a child Task.',
    requiredArtifacts: [
      { name: 'items.json', kind: 'json' as const, schema: { type: 'array', items: { type: 'string' } } },
    ],
    stages: [
      { name: 'list', produces: ['items.json'] },
      {
        name: 'fix',
        proposesCompletion: true,
        fanOut: {
          from: 'items.json',
          join,
          spec: {
            title: 'Fix {{item}}',
            goal: 'Fix the defect ITEM={{item}}.',
            requiredArtifacts: [{ name: 'fixed/{{item}}.txt', kind: 'text' }],
            acceptance: { command: '/bin/sh', args: ['-c', 'test -f fixed/{{item}}.txt'] },
          },
        },
      },
    ],
    workspaceSeed: agents.seed,
    acceptance: {
      command: '/bin/sh',
      args: ['-c', 'test -f fixed/a.txt && test -f fixed/b.txt && test -f fixed/c.txt'],
    },
  };
}
