import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { opencodeCommand, opencodeEnv } from '../../drivers/acp/index.js';
import { codexCommand } from '../../drivers/codex/index.js';
import type { HarnessConfig } from '../../frontier/index.js';
import { opencodeReplies, startChatModel, type ChatModelScriptIn } from '../../workloads/scripted/chat-model.js';
import { scriptedCodexLaunch } from '../../workloads/scripted/responses-codex.js';
import { startResponsesModel } from '../../workloads/scripted/responses-model.js';
import { optionalPart, type OptionalPart } from '../support/optional-part.js';
import { tempDir } from '../support/temp.js';
import { shellWord, type Programs } from './programs.js';

export type DriverName = 'command' | 'opencode' | 'codex';

/** One harness configuration, for one Task, and what to stop once the Task rests. */
export interface Launched {
  config: HarnessConfig;
  /** Everything the agent sent its scripted model (none for the command driver). */
  modelSaw(): string;
  close(): Promise<void>;
}

/**
 * What an agent is made to do, in order: run a command line with its shell tool, or (an ACP agent
 * only) call its own `write` / `read` tools, all calls of one step in one model turn.
 */
export type AgentStep = { run: string[] } | { write: Array<{ path: string; content: string }> } | { read: string[] };

/** How a driver's real agent is made to run the attack program. */
export interface AttackAgent {
  driver: DriverName;
  /**
   * A harness whose agent takes `steps` (mostly one: `node <attack.mjs> <attack> <args…>`) in its
   * workspace, then ends its run. `network: 'none'` puts the agent in a network namespace of its
   * own; its model is then reached through the relay (relay.ts) and a unix socket in the programs
   * folder. `clientFs`: the agent's file tools go through the Host's ACP client file system.
   */
  launch(
    steps: AgentStep[],
    options: { network: 'host' | 'none'; home: string; clientFs?: boolean },
  ): Promise<Launched>;
}

/** The command lines of `steps`; refuses a step only an ACP agent can take. */
function commandLines(driver: DriverName, steps: AgentStep[]): string[][] {
  return steps.map((step) => {
    if ('run' in step) return step.run;
    throw new Error(`the ${driver} agent has no file tools of the Host's: ${JSON.stringify(step)}`);
  });
}

const TIMEOUT_MS = 150_000;
const USAGE = { prompt_tokens: 300, completion_tokens: 30, total_tokens: 330 };
type ChatReplyIn = ChatModelScriptIn['turns'][number];

/** The `command` driver: the attack program is the agent. */
export function commandAgent(programs: Programs): AttackAgent {
  return {
    driver: 'command',
    launch(steps, { network }) {
      const lines = commandLines('command', steps);
      if (lines.length !== 1) throw new Error('the command driver runs one command line');
      const [command, ...args] = lines[0]!;
      return Promise.resolve({
        config: {
          driver: 'command',
          command: command!,
          args,
          readable: [programs.dir],
          network,
          timeoutMs: TIMEOUT_MS,
        },
        modelSaw: () => '',
        close: () => Promise.resolve(),
      });
    },
  };
}

const opencodePath = (() => {
  try {
    const { command } = opencodeCommand();
    return existsSync(command) ? command : undefined;
  } catch {
    return undefined;
  }
})();

/** The opencode binary, as an optional part (skipped locally when absent, a failure under CI=true). */
export const OPENCODE: OptionalPart = optionalPart(
  'opencode',
  opencodePath,
  'opencode-linux-x64 is not installed (npm run agents:install)',
);

/**
 * The REAL `opencode acp`, whose scripted model asks its `bash` tool to run the attack, then ends the
 * turn. Each Task's agent gets a home of its own, copied from one that `opencode session list` set
 * up once (its database made): a fresh home costs a run some 10 s more on this machine, a copied one
 * nothing, and no two Tasks share a writable path.
 */
export function opencodeAgent(programs: Programs): AttackAgent {
  let template: string | undefined;
  return {
    driver: 'opencode',
    async launch(steps, { network, home, clientFs }) {
      const { bash, done } = opencodeReplies(USAGE);
      const calls = (name: string, args: Array<Record<string, unknown>>): ChatReplyIn => ({
        toolCalls: args.map((a) => ({ name, arguments: a })),
        usage: USAGE,
      });
      const turns = steps.map((step) =>
        'run' in step
          ? bash(step.run.map(shellWord).join(' '), 'Run the attack')
          : 'write' in step
            ? calls(
                'write',
                step.write.map((w) => ({ filePath: w.path, content: w.content })),
              )
            : calls(
                'read',
                step.read.map((path) => ({ filePath: path })),
              ),
      );
      const model = await startChatModel({ script: { turns: [...turns, done('Attack attempted.')] } });
      const port = Number(new URL(model.url).port);
      const opencode = opencodeCommand();
      template ??= opencodeHome(opencode.command);
      cpSync(template, home, { recursive: true });
      const bridge = network === 'none' ? await modelBridge(programs, port) : undefined;
      return {
        config: {
          driver: 'acp',
          ...wrapped(programs, opencode, bridge, port),
          readable: [...opencode.readable, programs.dir],
          // `ask`: opencode asks before each edit and writes through the client's fs/write_text_file.
          env: opencodeEnv({ home, modelUrl: model.url, ...(clientFs ? { permission: 'ask' as const } : {}) }),
          writable: [home],
          approvals: 'accept',
          network,
          timeoutMs: TIMEOUT_MS,
        },
        modelSaw: () => JSON.stringify(model.requests),
        close: async () => {
          await model.close();
          await bridge?.close();
        },
      };
    },
  };
}

/** A home in which opencode made its database (`opencode session list`), to copy for each run. */
function opencodeHome(command: string): string {
  const home = join(tempDir('ordivon-redteam-opencode-home-'), 'home');
  const made = spawnSync(command, ['session', 'list'], {
    env: opencodeEnv({ home, modelUrl: 'http://127.0.0.1:9/v1' }),
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (made.status !== 0) throw new Error(`opencode session list: ${made.status ?? made.signal} ${made.stderr}`);
  return home;
}

const codexFound = codexCommand();

/** The codex app-server, as an optional part (skipped locally when absent, a failure under CI=true). */
export const CODEX: OptionalPart = optionalPart(
  'codex',
  codexFound.ok ? codexFound.value.command : undefined,
  `@openai/codex is not installed (npm install with dev dependencies)${codexFound.ok ? '' : `: ${codexFound.detail}`}`,
);

/** The REAL `codex app-server`, whose scripted model asks its shell tool to run the attack, then ends the turn. */
export function codexAgent(programs: Programs): AttackAgent {
  return {
    driver: 'codex',
    async launch(steps, { network, home }) {
      const model = await startResponsesModel({
        script: [
          ...commandLines('codex', steps).map((command) => ({ type: 'shell' as const, command })),
          { type: 'message', text: 'Attack attempted.' },
        ],
      });
      const port = Number(new URL(model.url).port);
      const launch = scriptedCodexLaunch({ modelUrl: model.url, home });
      const bridge = network === 'none' ? await modelBridge(programs, port) : undefined;
      return {
        config: {
          driver: 'codex',
          ...wrapped(programs, launch, bridge, port),
          env: launch.env,
          readable: [...launch.readable, programs.dir],
          writable: launch.writable,
          approvals: 'accept',
          network,
          timeoutMs: TIMEOUT_MS,
        },
        modelSaw: () => JSON.stringify(model.requests),
        close: async () => {
          await model.close();
          await bridge?.close();
        },
      };
    },
  };
}

/** The agent's own command line, or (behind a model bridge) the relay running it. */
function wrapped(
  programs: Programs,
  agent: { command: string; args: string[] },
  bridge: ModelBridge | undefined,
  port: number,
): { command: string; args: string[] } {
  if (bridge === undefined) return { command: agent.command, args: agent.args };
  return {
    command: process.execPath,
    args: [programs.relay, bridge.socket, String(port), agent.command, ...agent.args],
  };
}

interface ModelBridge {
  socket: string;
  close(): Promise<void>;
}

/**
 * A unix socket in the programs folder whose every connection is passed to 127.0.0.1:`port` on the
 * machine's loopback (the scripted model). The relay inside a `network: none` sandbox connects to it.
 */
async function modelBridge(programs: Programs, port: number): Promise<ModelBridge> {
  const socket = join(programs.dir, `model-${port}.sock`);
  const open = new Set<Socket>();
  const server: Server = createServer((inbound) => {
    const outbound = createConnection({ host: '127.0.0.1', port });
    for (const s of [inbound, outbound]) {
      open.add(s);
      s.on('close', () => open.delete(s));
    }
    inbound.pipe(outbound).pipe(inbound);
    inbound.on('error', () => outbound.destroy());
    outbound.on('error', () => inbound.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, () => resolve());
  });
  // The sandbox's account must be allowed to connect (write permission on the socket file).
  chmodSync(socket, 0o666);
  return {
    socket,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of open) s.destroy();
      }),
  };
}
