#!/usr/bin/env node
/**
 * SCRIPTED Hermes-like ACP agent (not Hermes, no model): speaks real ACP v1 over stdio through the
 * SDK's agent side and behaves exactly as its JSON script says (see hermes-script.ts). It mimics
 * Hermes' observable habits — unfinished tool calls, text-less turns, `usage_update` plus
 * `PromptResponse.usage` — and offers misbehaviour switches (exit mid-turn, hang, ignore cancel,
 * ignore stdin close, ignore SIGTERM, raw lines) for driver tests. It names itself
 * `hermes-like (scripted)` in `agentInfo`.
 *
 * Run: `node dist/workloads/scripted/hermes-like-agent.js [script.json]` or with `HERMES_LIKE_SCRIPT`.
 * Exit code 2 with `<code>: <field path>: <message>` on stderr when the script is invalid.
 */
import * as acp from '@agentclientprotocol/sdk/unstable';
import { appendFileSync } from 'node:fs';
import { Readable, Writable } from 'node:stream';
import { loadHermesScript } from './hermes-script.js';
import { runSteps, type TurnContext } from './hermes-steps.js';

const loaded = loadHermesScript(process.argv.slice(2), process.env);
if (!loaded.ok) {
  process.stderr.write(`hermes-like (scripted): ${loaded.code}: ${loaded.detail}\n`);
  process.exit(2);
}
const script = loaded.script;

function trace(event: string, data: Record<string, unknown> = {}): void {
  if (script.trace) appendFileSync(script.trace, JSON.stringify({ event, ...data }) + '\n');
}

trace('start', { pid: process.pid });
if (script.ignoreSigterm) process.on('SIGTERM', () => trace('sigterm_ignored'));

const sessions = new Map<string, string>();
const turns = new Map<string, AbortController>();
const vars = new Map<string, string>();
/** Late updates still being sent; an agent closing on EOF finishes them first, so the script stays deterministic. */
let late: Promise<unknown> = Promise.resolve();

const stream = acp.ndJsonStream(
  Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
  Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
);

const connection = acp
  .agent({ name: script.agentInfo.name })
  .onRequest(acp.methods.agent.initialize, ({ params }) => {
    trace('recv', {
      method: 'initialize',
      protocolVersion: params.protocolVersion,
      fs: params.clientCapabilities?.fs ?? null,
    });
    return {
      protocolVersion: script.protocolVersion,
      agentCapabilities: { loadSession: false },
      agentInfo: script.agentInfo,
      authMethods: [],
    };
  })
  .onRequest(acp.methods.agent.session.new, ({ params }) => {
    trace('recv', { method: 'session/new', cwd: params.cwd });
    sessions.set(script.sessionId, params.cwd);
    return { sessionId: script.sessionId };
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    trace('recv', { method: 'session/prompt' });
    const cwd = sessions.get(params.sessionId);
    if (cwd === undefined) return { stopReason: 'refusal' }; // what Hermes answers for an unknown session
    const controller = new AbortController();
    turns.set(params.sessionId, controller);
    const ctx: TurnContext = { client, sessionId: params.sessionId, cwd, signal: controller.signal, vars, trace };
    const end = await runSteps(script.steps, ctx);
    turns.delete(params.sessionId);
    if (end === 'cancelled') {
      if (script.onCancel === 'ignore') {
        trace('cancel_ignored');
        return new Promise<never>(() => {});
      }
      return { stopReason: 'cancelled' };
    }
    if (script.afterAnswer.length > 0) {
      // After the answer has been queued: late updates, as some real agents send.
      late = new Promise((resolve) =>
        setImmediate(() => resolve(runSteps(script.afterAnswer, { ...ctx, signal: new AbortController().signal }))),
      );
    }
    return {
      stopReason: end === 'end_turn' ? 'end_turn' : script.stopReason,
      ...(script.promptUsage ? { usage: script.promptUsage } : {}),
      ...(script.promptMeta ? { _meta: script.promptMeta } : {}),
    };
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    trace('recv', { method: 'session/cancel' });
    turns.get(params.sessionId)?.abort();
  })
  .connect(stream);

void connection.closed.then(async () => {
  trace('stdin_closed');
  await late.catch(() => {});
  if (!script.ignoreStdinClose) process.exit(0);
  setInterval(() => trace('still_running'), 60_000); // a real agent that never exits on EOF
});
