import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { zodIssue } from '../../base/index.js';

/**
 * The behaviour of the SCRIPTED Hermes-like ACP agent, as data. Paths are workspace-relative
 * (joined to the session cwd without normalisation, so `../x` reaches the client as written) or
 * absolute. Steps run in order inside `session/prompt`.
 */
const Text = z.object({ text: z.string(), repeat: z.number().int().positive().max(10_000).default(1) });
const ToolKind = z.enum([
  'read',
  'edit',
  'delete',
  'move',
  'search',
  'execute',
  'think',
  'fetch',
  'switch_mode',
  'other',
]);

export const HermesStep = z.discriminatedUnion('do', [
  /** `agent_thought_chunk`s; `{i}` in the text is replaced by the chunk index. */
  Text.extend({ do: z.literal('thought') }),
  /** `agent_message_chunk`s (an empty text gives chunks with no final text), with a `messageId` if given. */
  Text.extend({ do: z.literal('message'), messageId: z.string().min(1).optional() }),
  /** Announces a tool call; its completion is a separate `tool_update` step (or never comes). */
  z.object({
    do: z.literal('tool_call'),
    id: z.string(),
    title: z.string(),
    kind: ToolKind.optional(),
    status: z.enum(['pending', 'in_progress']).optional(),
  }),
  z.object({
    do: z.literal('tool_update'),
    id: z.string(),
    status: z.enum(['pending', 'in_progress', 'completed', 'failed']).optional(),
    text: z.string().optional(),
  }),
  /**
   * `session/request_permission` with an allow_once and a reject_once option; the tool call
   * carries `kind`, `locations` (workspace-relative paths are made absolute) and `command` as
   * `rawInput.command` when given.
   */
  z.object({
    do: z.literal('permission'),
    id: z.string(),
    title: z.string(),
    kind: ToolKind.optional(),
    locations: z.array(z.string()).optional(),
    command: z.string().optional(),
    onReject: z.enum(['continue', 'end_turn']).default('continue'),
  }),
  /** `fs/read_text_file`; the content is kept under `into` for later `write.from`. */
  z.object({
    do: z.literal('read'),
    path: z.string(),
    into: z.string().optional(),
    line: z.number().int().positive().optional(),
    limit: z.number().int().positive().optional(),
  }),
  /** `fs/write_text_file` of `content`, of `json` (pretty-printed), or of a value kept by `read`. */
  z.object({
    do: z.literal('write'),
    path: z.string(),
    content: z.string().optional(),
    json: z.unknown().optional(),
    from: z.string().optional(),
  }),
  /** Read, replace every occurrence of `find`, write back — all through the client. */
  z.object({ do: z.literal('edit'), path: z.string(), find: z.string().min(1), replace: z.string() }),
  /** `usage_update` (context window usage, as Hermes sends it). */
  z.object({
    do: z.literal('usage'),
    used: z.number().int().nonnegative(),
    size: z.number().int().positive(),
    cost: z.object({ amount: z.number(), currency: z.string() }).optional(),
  }),
  /** A raw line written to stdout as is (malformed JSON, string-id requests, unknown update kinds). */
  z.object({ do: z.literal('raw'), line: z.string() }),
  /** Waits for `session/cancel` (answered per `script.onCancel`). */
  z.object({ do: z.literal('hang') }),
  /** Fails the prompt with a JSON-RPC error (as an agent whose model call failed, e.g. HTTP 400 → -32603). */
  z.object({
    do: z.literal('fail'),
    code: z.number().int().default(-32603),
    message: z.string().default('Internal error'),
  }),
  /** Exits the process mid-turn. */
  z.object({ do: z.literal('exit'), code: z.number().int().min(0).max(255).default(3) }),
  /** Spawns a long-lived child in the agent's process group (optionally holding stdout open). */
  z.object({ do: z.literal('spawn_sleeper'), holdStdout: z.boolean().default(false) }),
]);
export type HermesStep = z.infer<typeof HermesStep>;

export const HermesScript = z.object({
  agentInfo: z
    .object({ name: z.string(), version: z.string() })
    .default({ name: 'hermes-like (scripted)', version: '0.0.0-scripted' }),
  sessionId: z.string().min(1).default('hermes-like-session-1'),
  /** What `initialize` answers (a version other than 1 exercises the client's refusal). */
  protocolVersion: z.number().int().nonnegative().default(1),
  steps: z.array(HermesStep).default([]),
  /** Steps run right after the prompt has been answered (late updates, as real agents send). */
  afterAnswer: z.array(HermesStep).default([]),
  stopReason: z.enum(['end_turn', 'max_tokens', 'max_turn_requests', 'refusal']).default('end_turn'),
  /** Unstable `PromptResponse.usage`, as Hermes returns it when known. */
  promptUsage: z
    .object({
      inputTokens: z.number().int().nonnegative(),
      outputTokens: z.number().int().nonnegative(),
      totalTokens: z.number().int().nonnegative(),
      thoughtTokens: z.number().int().nonnegative().optional(),
      cachedReadTokens: z.number().int().nonnegative().optional(),
    })
    .optional(),
  /** `_meta` of the prompt answer (gemini-cli reports its token counts as `_meta.quota`). */
  promptMeta: z.record(z.string(), z.unknown()).optional(),
  /** `answer`: a cancelled turn answers `cancelled`; `ignore`: it never answers. */
  onCancel: z.enum(['answer', 'ignore']).default('answer'),
  /** Keep running after stdin closes (real agents that never exit on EOF). */
  ignoreStdinClose: z.boolean().default(false),
  ignoreSigterm: z.boolean().default(false),
  /** JSONL file the agent appends its observations to (pid, methods received, fs errors, …). */
  trace: z.string().optional(),
});
export type HermesScript = z.infer<typeof HermesScript>;
export type HermesScriptIn = z.input<typeof HermesScript>;

/** Environment variable carrying the script as JSON (alternative: a file path as the first argument). */
export const HERMES_SCRIPT_ENV = 'HERMES_LIKE_SCRIPT';

/**
 * Loads the script from `argv[0]` (a JSON file) or `HERMES_LIKE_SCRIPT`. Returns a clear error
 * with a code (`script_missing`, `script_unreadable`, `script_invalid`) and the field path.
 */
export function loadHermesScript(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
):
  | { ok: true; script: HermesScript }
  | { ok: false; code: 'script_missing' | 'script_unreadable' | 'script_invalid'; path?: string; detail: string } {
  let text: string | undefined = env[HERMES_SCRIPT_ENV];
  const file = argv[0];
  if (file !== undefined) {
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      return { ok: false, code: 'script_unreadable', detail: `${file}: ${(error as Error).message}` };
    }
  }
  if (text === undefined)
    return { ok: false, code: 'script_missing', detail: `pass a script file path or set ${HERMES_SCRIPT_ENV}` };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      code: 'script_invalid',
      path: '(root)',
      detail: `(root): not JSON: ${(error as Error).message}`,
    };
  }
  const parsed = HermesScript.safeParse(json);
  if (!parsed.success) {
    const { code, path, message } = zodIssue('script_invalid', parsed.error);
    return { ok: false, code, path, detail: `${path}: ${message}` };
  }
  return { ok: true, script: parsed.data };
}

/** Command, args and env to launch the scripted agent with `script` (for a DriverRunInput). */
export function hermesLikeLaunch(script: HermesScriptIn): {
  command: string;
  args: string[];
  env: Record<string, string>;
  readable: string[];
} {
  const agent = fileURLToPath(new URL('./hermes-like-agent.js', import.meta.url));
  // The agent is this package's own code: a confined run reads the compiled tree and the ACP SDK.
  const compiled = fileURLToPath(new URL('../..', import.meta.url));
  const modules = fileURLToPath(new URL('../../../node_modules', import.meta.url));
  return {
    command: process.execPath,
    args: [agent],
    env: { [HERMES_SCRIPT_ENV]: JSON.stringify(HermesScript.parse(script)) },
    readable: [compiled.replace(/\/$/, ''), modules],
  };
}
