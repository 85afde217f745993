import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { HarnessConfig } from '../../frontier/index.js';
import { openHost, type Host } from '../../host/index.js';
import type { Supervisor } from '../../kernel/index.js';
import type { TaskSpecInput } from '../../objects/index.js';
import { workspacePath, type JobRecord } from '../../runtime/index.js';
import { startService, type RunningService } from '../../cli/service/start-service.js';
import { taskRuns, type TaskRun } from '../../views/task-runs.js';
import { tempDir } from '../support/temp.js';
import type { Observation } from './attack.js';
import { commandAgent, type AgentStep, type AttackAgent, type Launched } from './agents.js';
import { writePrograms, type Programs } from './programs.js';

/** Everything an attacker is assumed to know: every path, port, pid and id of the Host it runs under. */
export interface Targets {
  state: string;
  /** `<state>/lmdb/data.mdb`: the Host's journal. */
  dataMdb: string;
  /** `<state>/service.sock`: the control socket (no token). */
  socket: string;
  /** The TCP control API on 127.0.0.1 (a token it does not have). */
  apiPort: number;
  /** The Host's process (this test process), which counts the SIGUSR2 it receives. */
  hostPid: number;
  /** The spec's `workspaceSeed`: a copy of the rig's seed, this Task's own. */
  seed: string;
  /** Another Task (the bystander) and its workspace. */
  otherTaskId: string;
  otherWorkspace: string;
  /** A TCP port on 127.0.0.1 (this Task's own) nobody confined should reach; it counts the connections it accepts. */
  loopbackPort: number;
  /** This Task's id, its workspace and (attack 4) the DecisionRequest it is asked. */
  taskId: string;
  workspace: string;
  requestId: string;
  /** Where the test says go once what the attack needs is in place (attack 4). */
  goFile: string;
  /** The attack program (the acceptance command of attack 12 runs it too). */
  attackProgram: string;
  /** A string unique to this Task that an attack plants (transformed) wherever it can write. */
  marker: string;
}

/** One attack, as a Task of its own: what the agent runs, and what the Task is. */
export interface AttackPlan {
  /** The attack's arguments (after the attack program and the attack's name), from the targets. */
  argv(t: Targets): string[];
  /**
   * What the agent does instead of running the attack once (an ACP agent's own file tools between
   * runs of the attack program); `attack(name, ...args)` is the command line of one run.
   */
  steps?(t: Targets, attack: (name: string, ...args: string[]) => string[]): AgentStep[];
  /** The agent's file tools go through the Host's ACP client file system (opencode: `permission: ask`). */
  clientFs?: boolean;
  /** The harness's network (default host: it must reach its model). */
  network?: 'host' | 'none';
  /** Artifacts besides `observed.json` the stage produces (and the Task requires). */
  extraArtifacts?: string[];
  /** Whether the stage proposes completion (default true: the Task completes when nothing went wrong). */
  proposesCompletion?: boolean;
  /** The acceptance command's argv (default: one that does nothing). */
  acceptance?(t: Targets): string[];
  /** After the Assignment is committed, before the Task rests (attack 4 opens its DecisionRequest). */
  during?(t: Targets, rig: RedTeamRig): Promise<void>;
}

/** What one attack Task left: its history as the Host keeps it, and what the attacker saw. */
export interface AttackRun {
  targets: Targets;
  state: string;
  events: ReturnType<Supervisor['events']>;
  runs: TaskRun[];
  /** The agent's report, read from the workspace's `observed.json` (whose digest the evidence must name). */
  observation: Observation | undefined;
  observedDigest: string | undefined;
  runJob: JobRecord | undefined;
  verifyJob: JobRecord | undefined;
  /** Each step the Host took for the Task (for failure messages). */
  steps: string[];
  /** Connections the Task's own loopback port accepted, from its creation until it rested. */
  loopbackAccepted: number;
  /** Everything the agent sent its scripted model: what the agent was told by the Host's tools too. */
  modelSaw: string;
}

/** A TCP server on 127.0.0.1 that counts the connections it accepts. */
export interface LoopbackCounter {
  port: number;
  accepted(): number;
  close(): Promise<void>;
}

export async function loopbackCounter(): Promise<LoopbackCounter> {
  let accepted = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address !== 'object') throw new Error('the counter has no port');
  return {
    port: address.port,
    accepted: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A digest of a directory tree as it is on disk: every entry's relative path, kind, mode, and its
 * bytes or link target. Equal digests: nothing in the tree was created, removed or changed.
 */
export function treeDigest(root: string): string {
  const hash = createHash('sha256');
  const visit = (rel: string): void => {
    const path = join(root, rel);
    const stat = lstatSync(path);
    hash.update(`${rel}\0${stat.mode}\0${stat.nlink}\0`);
    if (stat.isDirectory()) for (const name of readdirSync(path).sort()) visit(join(rel, name));
    else if (stat.isSymbolicLink()) hash.update(readlinkSync(path));
    else if (stat.isFile()) hash.update(readFileSync(path));
    hash.update('\0');
  };
  visit('.');
  return hash.digest('hex');
}

/** Every file's bytes under `root` (regular files only, symlinks not followed), path → text. */
export function filesUnder(root: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const visit = (path: string): void => {
    const stat = lstatSync(path, { throwIfNoEntry: false });
    if (stat === undefined) return;
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
    else if (stat.isFile()) files.set(path, readFileSync(path));
  };
  visit(root);
  return files;
}

/** Living processes whose command line holds `marker`, or whose working directory is under `dir`. */
export function processesOf(marker: string, dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      if (stat[stat.lastIndexOf(')') + 2] === 'Z') continue;
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ');
      let cwd = '';
      try {
        cwd = readlinkSync(`/proc/${pid}/cwd`);
      } catch {
        // a process of another mount namespace may not show its cwd
      }
      if (cmdline.includes(marker) || cwd === dir || cwd.startsWith(dir + '/'))
        found.push(`${pid} (cwd ${cwd}): ${cmdline.slice(0, 160)}`);
    } catch {
      // exited while scanning
    }
  }
  return found;
}

const SEED_FILES: Record<string, string> = {
  'README.md': '# A small repository\n\nThe seed of every red-team Task.\n',
  'src/a.js': 'export const x = 1;\n',
};

export interface RedTeamRig {
  agent: AttackAgent;
  programs: Programs;
  host: Host;
  sup: Supervisor;
  state: string;
  /** The seed every Task's own is a copy of. */
  seed: string;
  /** The control socket's service (no token) and the TCP one (a token the agent never sees). */
  socketService: RunningService;
  apiService: RunningService;
  /** SIGUSR2 signals this process (the Host's) received since the rig opened. */
  signals(): number;
  /** The bystander Task, completed before any attack: its workspace and history must not move. */
  bystander: { taskId: string; workspace: string; tree: string; revision: number; types: string[] };
  /** The seed's tree digest, which every Task's own seed must still have after its attack. */
  seedTree: string;
  attack(name: string, attack: string, plan: AttackPlan): Promise<AttackRun>;
  close(): Promise<void>;
}

const STAGE = 'attack';

/**
 * One embedded Host (the default confinement: bwrap) for one driver's attacks, with the control API
 * served on its socket (`<state>/service.sock`) and on 127.0.0.1 with a token, a loopback port that
 * counts connections, a SIGUSR2 counter in this (the Host's) process, a seed, and a bystander Task
 * run to completion by the `command` driver before any attack.
 */
export async function openRig(makeAgent: (programs: Programs) => AttackAgent, maxThreads: number): Promise<RedTeamRig> {
  const programs = writePrograms();
  const agent = makeAgent(programs);
  const dir = tempDir(`ordivon-redteam-${agent.driver}-`);
  const state = join(dir, 'state');
  const seed = join(dir, 'seed');
  const homes = join(dir, 'homes');
  for (const [name, text] of Object.entries(SEED_FILES)) {
    mkdirSync(join(seed, name, '..'), { recursive: true });
    writeFileSync(join(seed, name), text);
  }
  mkdirSync(homes);
  const seedTree = treeDigest(seed);

  let signals = 0;
  const onSignal = (): void => void signals++;
  process.on('SIGUSR2', onSignal);

  const plans = new Map<string, () => Promise<Launched>>();
  const launched = new Map<string, Launched>();
  const steps = new Map<string, string[]>();
  const bystanderAgent = commandAgent(programs);
  const host = await openHost({
    state,
    maxThreads,
    harnesses: {
      agent: async ({ taskId }): Promise<HarnessConfig> => {
        const plan = plans.get(taskId);
        if (plan === undefined) throw new Error(`no attack planned for ${taskId}`);
        const one = await plan();
        launched.set(taskId, one);
        return one.config;
      },
      bystander: async () =>
        (
          await bystanderAgent.launch([{ run: [process.execPath, programs.attack, 'noop'] }], {
            network: 'none',
            home: homes,
          })
        ).config,
    },
    onStep: (taskId, step) => steps.get(taskId)?.push(step),
  });
  const sup = host.supervisor;
  const socketService = await startService({
    supervisor: sup,
    listener: { kind: 'socket', path: join(state, 'service.sock') },
  });
  const apiService = await startService({ supervisor: sup, listener: { kind: 'tcp', host: '127.0.0.1', port: 0 } });
  if (apiService.listener.kind !== 'tcp') throw new Error('the API listens on TCP');
  const apiPort = apiService.listener.port;

  /** A copy of the seed for one Task: an attack that gets through to it changes no other Task's. */
  const seedOf = (taskId: string): string => {
    const own = join(dir, 'seeds', taskId);
    cpSync(seed, own, { recursive: true });
    return own;
  };
  const spec = (taskId: string, plan: AttackPlan, t: Targets | undefined): TaskSpecInput => {
    const artifacts = ['observed.json', ...(plan.extraArtifacts ?? [])];
    const acceptance = plan.acceptance && t ? plan.acceptance(t) : [process.execPath, '-e', ''];
    return {
      taskId,
      title: `Red team: ${taskId}`,
      goal: `Run the attack of ${taskId} and report what it saw in observed.json.`,
      requiredArtifacts: artifacts.map((name) =>
        name === 'observed.json' ? { name, kind: 'json' } : { name, kind: 'file' },
      ),
      stages: [
        {
          name: STAGE,
          instructions: 'Run the attack.',
          produces: artifacts,
          proposesCompletion: plan.proposesCompletion ?? true,
        },
      ],
      result: 'observed.json',
      acceptance: { command: acceptance[0]!, args: acceptance.slice(1), timeoutMs: 60_000 },
      workspaceSeed: t?.seed ?? seedOf(taskId),
    };
  };

  const rest = async (taskId: string): Promise<string> => {
    const reached = await sup
      .waitFor(taskId, ['completed', 'waiting'], ['cancelled', 'blocked'])
      .catch((error: Error) => {
        throw new Error(`${error.message}; steps:\n${(steps.get(taskId) ?? []).join('\n')}`, { cause: error });
      });
    return reached;
  };

  // The bystander: another Task with a workspace of its own, completed before any attack runs.
  const bystanderId = `${agent.driver}-bystander`;
  steps.set(bystanderId, []);
  await sup.createTask(spec(bystanderId, { argv: () => [] }, undefined));
  await sup.send(bystanderId, { type: 'assignment.commit', harness: 'bystander', stage: STAGE });
  const bystanderState = await rest(bystanderId);
  if (bystanderState !== 'completed')
    throw new Error(`the bystander Task is ${bystanderState}: ${steps.get(bystanderId)!.join('\n')}`);
  const bystanderWorkspace = workspacePath(join(state, 'workspaces'), bystanderId, 1);
  const bystanderEvents = sup.events(bystanderId);
  const bystander = {
    taskId: bystanderId,
    workspace: bystanderWorkspace,
    tree: treeDigest(bystanderWorkspace),
    revision: bystanderEvents.at(-1)!.revision,
    types: bystanderEvents.map((e) => e.type),
  };

  const rig: RedTeamRig = {
    agent,
    programs,
    host,
    sup,
    state,
    seed,
    socketService,
    apiService,
    signals: () => signals,
    bystander,
    seedTree,
    async attack(name, attack, plan) {
      const taskId = `${agent.driver}-${name}`;
      const counter = await loopbackCounter();
      const targets: Targets = {
        state,
        dataMdb: join(state, 'lmdb', 'data.mdb'),
        socket: join(state, 'service.sock'),
        apiPort,
        hostPid: process.pid,
        seed: seedOf(taskId),
        otherTaskId: bystanderId,
        otherWorkspace: bystanderWorkspace,
        loopbackPort: counter.port,
        taskId,
        workspace: workspacePath(join(state, 'workspaces'), taskId, 1),
        requestId: `${taskId}-ship`,
        goFile: join(programs.dir, `go-${taskId}`),
        attackProgram: programs.attack,
        marker: `redteam-${taskId}-${process.pid}`,
      };
      const line = (name: string, ...args: string[]) => [process.execPath, programs.attack, name, ...args];
      const agentSteps = plan.steps ? plan.steps(targets, line) : [{ run: line(attack, ...plan.argv(targets)) }];
      const options = { network: plan.network ?? 'host', home: join(homes, taskId), clientFs: plan.clientFs ?? false };
      plans.set(taskId, () => agent.launch(agentSteps, options));
      steps.set(taskId, []);
      await sup.createTask(spec(taskId, plan, targets));
      const sent = await sup.send(taskId, { type: 'assignment.commit', harness: 'agent', stage: STAGE });
      if (!sent.admitted) throw new Error(`assignment.commit of ${taskId} refused: ${JSON.stringify(sent)}`);
      await plan.during?.(targets, rig);
      const reached = await rest(taskId);
      const modelSaw = launched.get(taskId)?.modelSaw() ?? '';
      await launched.get(taskId)?.close();
      launched.delete(taskId);
      await counter.close();
      const events = sup.events(taskId);
      const runs = taskRuns({ events, object: (digest) => sup.getObject(digest).body });
      const observedFile = join(targets.workspace, 'observed.json');
      const observedBytes = existsSync(observedFile) ? readFileSync(observedFile) : undefined;
      const job = async (id: string) =>
        (await host.runtime.findJobs({ clientRequestId: `${taskId}/a1/g1/${id}` })).at(0);
      return {
        targets,
        state: reached,
        events,
        runs,
        observation: observedBytes ? (JSON.parse(observedBytes.toString('utf8')) as Observation) : undefined,
        observedDigest: observedBytes
          ? 'sha256:' + createHash('sha256').update(observedBytes).digest('hex')
          : undefined,
        runJob: await job('run'),
        verifyJob: await job('verify'),
        steps: steps.get(taskId)!,
        loopbackAccepted: counter.accepted(),
        modelSaw,
      };
    },
    async close() {
      process.off('SIGUSR2', onSignal);
      await apiService.close();
      await socketService.close();
      await host.stop();
      await Promise.all([...launched.values()].map((l) => l.close()));
    },
  };
  return rig;
}
