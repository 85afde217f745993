import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { opencodeCommand, opencodeEnv } from '../../drivers/acp/index.js';
import { startChatModel, opencodeReplies, type ChatReply } from '../scripted/chat-model.js';
import { scriptedCodexLaunch } from '../scripted/responses-codex.js';
import { startResponsesModel } from '../scripted/responses-model.js';
import { toolOutputs, type ResponsesStep, type ScriptEntry } from '../scripted/responses-script.js';
import { CONTEXT_DIGEST, type PlanStep, type StagePlan } from './plans.js';

/**
 * The four ways a stage's work is done in the comparison: (a) the one-shot gateway, one model
 * call whose answer is written as the files; (b) Loop v0; (c) the real `codex app-server` and
 * (d) the real `opencode acp`, mature harnesses with their own loops.
 */
export const VARIANTS = ['gateway', 'loop', 'codex', 'opencode'] as const;
export type Variant = (typeof VARIANTS)[number];

/** One model request as the stage's scripted model saw it. */
export interface SeenRequest {
  /** The conversation's position: model outputs it already holds (0 starts a conversation). */
  index: number;
  /** Tool results the request carries back: each a tool call the harness ran. */
  toolResults: number;
  /** Characters of the request body and of the answer: what the call cost, in the harness's own wording. */
  requestChars: number;
  answerChars: number;
  /** False for the request held until the Host was killed. */
  answered: boolean;
}

/** A stage's loopback scripted model, and what it saw. */
export interface StageModel {
  url: string;
  seen: SeenRequest[];
  /** Resolves once the held request (`holdAt`) arrived. */
  held: Promise<void>;
  close(): Promise<void>;
}

/** The gateway's answer: every file by its path, and the text that ends the stage. */
export interface GatewayAnswer {
  files: Record<string, string>;
  summary: string;
}

const heredoc = (path: string, text: string) =>
  `cat > ${path} <<'ORDIVON_EOF'\n${text.endsWith('\n') ? text : `${text}\n`}ORDIVON_EOF`;
const shellOf = (step: PlanStep) => ('run' in step ? step.run : heredoc(step.write, step.text));

/** The Context digest the request's prompt names (`Context digest: …`), put where the plan quotes it. */
function quoteDigest<T>(value: T, body: unknown): T {
  const text = JSON.stringify(value);
  if (!text.includes(CONTEXT_DIGEST)) return value;
  const digest = /Context digest: ([^\s"\\]+)/.exec(JSON.stringify(body))?.[1];
  if (digest === undefined) throw new Error('the plan quotes the Context digest, and the prompt names none');
  return JSON.parse(text.split(CONTEXT_DIGEST).join(digest)) as T;
}

/** The stage's model turns in the Responses API's step language, for the variants that speak it. */
function responsesSteps(variant: Exclude<Variant, 'opencode'>, plan: StagePlan): ResponsesStep[] {
  if (variant === 'gateway') {
    const files = Object.fromEntries(plan.steps.flatMap((s) => ('write' in s ? [[s.write, s.text]] : [])));
    return [{ type: 'message', text: JSON.stringify({ files, summary: plan.done } satisfies GatewayAnswer) }];
  }
  if (variant === 'codex') {
    return [
      ...plan.steps.map((s): ResponsesStep => ({ type: 'shell', command: ['sh', '-c', shellOf(s)] })),
      { type: 'message', text: plan.done },
    ];
  }
  return [
    ...plan.steps.map((s): ResponsesStep =>
      'run' in s
        ? { type: 'tool', name: 'run_command', arguments: { command: s.run } }
        : { type: 'tool', name: 'write_file', arguments: { path: s.write, content: s.text } },
    ),
    { type: 'tool', name: 'finish', arguments: { summary: plan.done } },
  ];
}

/** opencode's turns: its own `bash` tool for every step. */
function opencodeTurns(plan: StagePlan): ChatReply[] {
  const { bash, done } = opencodeReplies({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  return [...plan.steps.map((s) => bash(shellOf(s), 'run' in s ? s.why : `Write ${s.write}`)), done(plan.done)];
}

/**
 * Starts the stage's scripted model for `variant`: Responses for the gateway, Loop v0 and Codex,
 * Chat Completions for opencode; each picks its answer by the conversation's position, so a
 * harness that starts over is answered from the first turn again. `holdAt`: the first request at
 * that position is held (never answered) and `held` resolves.
 */
export async function startStageModel(variant: Variant, plan: StagePlan, holdAt?: number): Promise<StageModel> {
  const seen: SeenRequest[] = [];
  let holding = holdAt;
  let onHeld!: () => void;
  const held = new Promise<void>((resolve) => (onHeld = resolve));
  /** Records the request; true when it is the one to hold. */
  const see = (index: number, toolResults: number, body: unknown, answer: unknown): boolean => {
    const hold = index === holding;
    if (hold) holding = undefined;
    const requestChars = JSON.stringify(body).length;
    seen.push({ index, toolResults, requestChars, answerChars: JSON.stringify(answer).length, answered: !hold });
    if (hold) onHeld();
    return hold;
  };

  if (variant === 'opencode') {
    const model = await startChatModel({
      script: { turns: opencodeTurns(plan) },
      turnBy: 'conversation',
      answer: (reply, { turn, body }) => {
        const answer = quoteDigest(reply, body);
        const results = body.messages.filter((m) => (m as { role?: unknown }).role === 'tool').length;
        return see(turn, results, body, answer) ? { ...answer, hang: true } : answer;
      },
    });
    const close = async () => {
      // opencode's title calls offer no tools and take no turn; they are calls all the same.
      for (const r of model.requests.filter((r) => r.kind === 'title'))
        seen.push({
          index: -1,
          toolResults: 0,
          requestChars: JSON.stringify(r.body).length,
          answerChars: 0,
          answered: true,
        });
      await model.close();
    };
    return { url: model.url, seen, held, close };
  }
  const script = responsesSteps(variant, plan).map((step): ScriptEntry => ({ index, body }) => {
    const answer = quoteDigest(step, body);
    return see(index, toolOutputs(body).length, body, answer) ? { type: 'hang' } : answer;
  });
  const model = await startResponsesModel({ script });
  return { url: model.url, seen, held, close: () => model.close() };
}

/** The gateway's executable (a `command` harness): compiled beside this module. */
export const GATEWAY_AGENT = fileURLToPath(new URL('./gateway-agent.js', import.meta.url));
const PACKAGE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MODULES = join(PACKAGE_ROOT, 'node_modules');

/** The harness that runs a stage of `variant` against its model at `url`, with `home` for the agents' throwaway homes. */
export function harnessOf(variant: Variant, url: string, home: string, timeoutMs: number): Record<string, unknown> {
  if (variant === 'gateway') {
    return {
      driver: 'command',
      command: process.execPath,
      args: [GATEWAY_AGENT],
      env: { ORDIVON_GATEWAY_URL: url },
      // Its compiled code and the packages it imports (zod), wherever node_modules really is (a
      // sandbox mounts paths, not the links to them); the default network (`host`) reaches the
      // model on loopback.
      readable: [PACKAGE_ROOT, ...(existsSync(MODULES) ? [realpathSync(MODULES)] : [])],
      timeoutMs,
    };
  }
  if (variant === 'loop') {
    return { driver: 'loop', model: 'scripted-model', loop: { format: 'responses', baseUrl: url }, timeoutMs };
  }
  if (variant === 'codex') return { driver: 'codex', ...scriptedCodexLaunch({ modelUrl: url, home }), timeoutMs };
  return {
    driver: 'acp',
    ...opencodeCommand(),
    env: opencodeEnv({ home, modelUrl: url }),
    writable: [home],
    // The plan's commands are the workload's own, run in the Attempt's workspace (docs/permissions.md).
    approvals: 'accept',
    timeoutMs,
  };
}
