import { mkdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { z } from 'zod';
import { zodIssue } from '../../base/index.js';
import { ACP_AGENTS, agentCommand, defaultAgentsDir, type ModelApi } from './acp-agents.js';
import type { AcpLaunchCode } from './errors.js';

/**
 * A harness recipe as published for users (examples/agents.config.json): how to start a real ACP
 * agent against its real provider. `envFrom` names the variables passed through from the
 * environment at spawn time (the API key among them); their values are never part of the recipe.
 */
export const AgentRecipe = z.looseObject({
  driver: z.literal('acp'),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  envFrom: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/)).default([]),
  /** Offer the agent the client's `fs/*` methods (DriverRunInput.clientFs); gemini-cli 0.61 must not get them. */
  clientFs: z.boolean().optional(),
  model: z.string().optional(),
  timeoutMs: z.number().int().positive().optional(),
});
export type AgentRecipe = z.infer<typeof AgentRecipe>;

export const AgentRecipes = z.looseObject({ harnesses: z.record(z.string(), AgentRecipe) });
export type AgentRecipes = z.infer<typeof AgentRecipes>;

/** Reads and parses a recipe file; throws the zod error (with its path) when it does not parse. */
export function loadAgentRecipes(path: string): AgentRecipes {
  return AgentRecipes.parse(JSON.parse(readFileSync(path, 'utf8')));
}

/** A recipe made concrete for one run against a scripted loopback model. */
export interface ScriptedAgentLaunch {
  command: string;
  args: string[];
  /** The complete environment (the driver passes nothing else). */
  env: Record<string, string>;
  clientFs: boolean;
  /** The wire API the scripted model must speak. */
  api: ModelApi;
  /** What a confined run reads besides its workspace: the agents' install (`.agents/node_modules`). */
  readable: string[];
  /** What a confined run writes besides its workspace: its throwaway home. */
  writable: string[];
}

export type ScriptedAgentLaunchResult =
  { ok: true; value: ScriptedAgentLaunch } | { ok: false; code: AcpLaunchCode; detail: string; path?: string };

export interface ScriptedLaunchOptions {
  /** Base URL of the scripted model, in the form its server's `url` gives. */
  modelUrl: string;
  /** Throwaway home: HOME for the agent, prepared with the settings a user would have. */
  home: string;
  /** Where `npm run agents:install` put the agents; default the repository's `.agents/`. */
  agentsDir?: string;
  /** PATH for the agent and its shell commands; default this process's. */
  path?: string;
}

/** Names in `envFrom` whose value is a credential: replaced by a harmless placeholder, never read. */
const SECRET_NAME = /(_API_KEY|_TOKEN|_SECRET|_KEY)$/;
export const SCRIPTED_SECRET = 'scripted-placeholder-not-a-key';

/**
 * Makes `recipe` concrete for a run against a scripted loopback model, changing only what points
 * at the provider: the command is resolved under `.agents/`, `envFrom` is filled from a synthetic
 * environment (HOME = `home`, PATH, every credential = `SCRIPTED_SECRET`), and the agent's
 * endpoint variable or provider override is set to `modelUrl`. Nothing is inherited from this
 * process's environment, so no proxy or real key reaches the agent. Never throws: a recipe that
 * does not parse or names a variable it cannot fill is `invalid_launch_config` (with `path`), an
 * unknown command `agent_unsupported`, a missing install `agent_not_installed`.
 */
export function scriptedAgentLaunch(recipe: unknown, options: ScriptedLaunchOptions): ScriptedAgentLaunchResult {
  const parsed = AgentRecipe.safeParse(recipe);
  if (!parsed.success) {
    const { path, message } = zodIssue('invalid_launch_config', parsed.error);
    return { ok: false, code: 'invalid_launch_config', detail: message, path };
  }
  const r = parsed.data;
  const agent = ACP_AGENTS[basename(r.command)];
  if (!agent) {
    const known = Object.keys(ACP_AGENTS).join(', ');
    return {
      ok: false,
      code: 'agent_unsupported',
      detail: `no scripted launch for '${r.command}' (known: ${known})`,
      path: 'command',
    };
  }
  const resolved = agentCommand(agent, options.agentsDir ?? defaultAgentsDir());
  if (!resolved.ok) return resolved;

  const env: Record<string, string> = { ...r.env };
  for (const [i, name] of r.envFrom.entries()) {
    if (name === 'HOME') env[name] = options.home;
    else if (name === 'PATH') env[name] = options.path ?? process.env['PATH'] ?? '/usr/local/bin:/usr/bin:/bin';
    else if (SECRET_NAME.test(name)) env[name] = SCRIPTED_SECRET;
    else
      return {
        ok: false,
        code: 'invalid_launch_config',
        detail: `no scripted value for ${name}`,
        path: `envFrom.${i}`,
      };
  }
  const args = [...resolved.args, ...r.args];
  if (agent.endpoint.kind === 'env') env[agent.endpoint.variable] = options.modelUrl;
  else {
    // The recipe selects its provider with `-c model_provider="<id>"`; a later dotted override
    // replaces just that provider's base_url and keeps the rest of the recipe's definition.
    const provider = r.args.map((a) => /^model_provider\s*=\s*"([^"]+)"$/.exec(a)?.[1]).find(Boolean);
    if (!provider) {
      return { ok: false, code: 'invalid_launch_config', detail: 'the recipe selects no model_provider', path: 'args' };
    }
    args.push('-c', `model_providers.${provider}.base_url=${JSON.stringify(options.modelUrl)}`);
  }
  mkdirSync(options.home, { recursive: true });
  agent.prepareHome?.(options.home);
  return {
    ok: true,
    value: {
      command: resolved.command,
      args,
      env,
      clientFs: r.clientFs ?? true,
      api: agent.api,
      readable: [join(options.agentsDir ?? defaultAgentsDir(), 'node_modules')],
      writable: [options.home],
    },
  };
}
