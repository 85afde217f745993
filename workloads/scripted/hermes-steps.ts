import * as acp from '@agentclientprotocol/sdk/unstable';
import { spawn } from 'node:child_process';
import { isAbsolute, resolve } from 'node:path';
import type { HermesStep } from './hermes-script.js';

/** What one scripted turn needs from the agent around it. */
export interface TurnContext {
  client: acp.AgentContext;
  sessionId: string;
  cwd: string;
  /** Aborted by `session/cancel`. */
  signal: AbortSignal;
  vars: Map<string, string>;
  trace(event: string, data?: Record<string, unknown>): void;
}

export type TurnEnd = 'done' | 'cancelled' | 'end_turn';

/** Joins without normalising, so `../x` reaches the client exactly as a misbehaving agent sends it. */
function workspacePath(cwd: string, path: string): string {
  return isAbsolute(path) ? path : `${cwd}/${path}`;
}

function rpcError(error: unknown): Record<string, unknown> {
  const e = error as { code?: unknown; message?: unknown; data?: unknown };
  return { code: e.code, message: String(e.message ?? error), data: e.data };
}

const untilAborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) =>
    signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
  );

/**
 * Runs scripted steps in order. Client-side failures (a refused write, a missing file) are traced
 * and the turn goes on, as Hermes reports tool errors as text rather than failing the prompt.
 */
export async function runSteps(steps: readonly HermesStep[], ctx: TurnContext): Promise<TurnEnd> {
  const update = (u: acp.SessionUpdate) =>
    ctx.client.notify(acp.methods.client.session.update, { sessionId: ctx.sessionId, update: u });
  for (const step of steps) {
    if (ctx.signal.aborted) return 'cancelled';
    switch (step.do) {
      case 'thought':
      case 'message': {
        const kind = step.do === 'thought' ? 'agent_thought_chunk' : 'agent_message_chunk';
        for (let i = 0; i < step.repeat; i++)
          await update({
            sessionUpdate: kind,
            content: { type: 'text', text: step.text.replaceAll('{i}', String(i)) },
            ...(step.do === 'message' && step.messageId ? { messageId: step.messageId } : {}),
          });
        break;
      }
      case 'tool_call':
        await update({
          sessionUpdate: 'tool_call',
          toolCallId: step.id,
          title: step.title,
          ...(step.kind ? { kind: step.kind } : {}),
          ...(step.status ? { status: step.status } : {}),
        });
        break;
      case 'tool_update':
        await update({
          sessionUpdate: 'tool_call_update',
          toolCallId: step.id,
          ...(step.status ? { status: step.status } : {}),
          ...(step.text !== undefined
            ? { content: [{ type: 'content', content: { type: 'text', text: step.text } }] }
            : {}),
        });
        break;
      case 'permission': {
        const toolCall: acp.RequestPermissionRequest['toolCall'] = {
          toolCallId: step.id,
          title: step.title,
          status: 'pending',
          ...(step.kind ? { kind: step.kind } : {}),
          ...(step.locations ? { locations: step.locations.map((p) => ({ path: resolve(ctx.cwd, p) })) } : {}),
          ...(step.command ? { rawInput: { command: step.command } } : {}),
        };
        const answer = await ctx.client.request(acp.methods.client.session.requestPermission, {
          sessionId: ctx.sessionId,
          toolCall,
          options: [
            { optionId: 'allow', name: 'Allow once', kind: 'allow_once' },
            { optionId: 'deny', name: 'Deny', kind: 'reject_once' },
          ],
        });
        const chosen = answer.outcome.outcome === 'selected' ? answer.outcome.optionId : 'cancelled';
        ctx.trace('permission', { id: step.id, outcome: chosen });
        if (chosen !== 'allow' && step.onReject === 'end_turn') return 'end_turn';
        break;
      }
      case 'read': {
        const content = await readThroughClient(ctx, 'read', step.path, {
          ...(step.line ? { line: step.line } : {}),
          ...(step.limit ? { limit: step.limit } : {}),
        });
        if (content === undefined) break;
        if (step.into) ctx.vars.set(step.into, content);
        ctx.trace('read', { path: step.path, chars: content.length });
        break;
      }
      case 'write': {
        const content =
          step.from !== undefined
            ? (ctx.vars.get(step.from) ?? '')
            : step.json !== undefined
              ? JSON.stringify(step.json, null, 2) + '\n'
              : (step.content ?? '');
        await writeThroughClient(ctx, step.path, content);
        break;
      }
      case 'edit': {
        const content = await readThroughClient(ctx, 'edit', step.path);
        if (content === undefined) break;
        if (!content.includes(step.find)) {
          ctx.trace('edit_miss', { path: step.path });
          break;
        }
        await writeThroughClient(ctx, step.path, content.split(step.find).join(step.replace));
        break;
      }
      case 'usage':
        await update({
          sessionUpdate: 'usage_update',
          used: step.used,
          size: step.size,
          ...(step.cost ? { cost: step.cost } : {}),
        });
        break;
      case 'raw':
        await new Promise<void>((resolve) => process.stdout.write(step.line + '\n', () => resolve()));
        break;
      case 'hang':
        ctx.trace('hang');
        await untilAborted(ctx.signal);
        return 'cancelled';
      case 'fail':
        ctx.trace('fail', { code: step.code });
        throw new acp.RequestError(step.code, step.message);
      case 'exit':
        ctx.trace('exit', { code: step.code });
        process.exit(step.code);
      case 'spawn_sleeper': {
        const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], {
          stdio: step.holdStdout ? ['ignore', 'inherit', 'ignore'] : 'ignore',
        });
        child.unref();
        ctx.trace('sleeper', { pid: child.pid });
        break;
      }
    }
  }
  return ctx.signal.aborted ? 'cancelled' : 'done';
}

/** Reads a file through the client; a refusal is traced as an `fs_error` of `op` and reads as undefined. */
async function readThroughClient(
  ctx: TurnContext,
  op: 'read' | 'edit',
  relative: string,
  range: { line?: number; limit?: number } = {},
): Promise<string | undefined> {
  try {
    const { content } = await ctx.client.request(acp.methods.client.fs.readTextFile, {
      sessionId: ctx.sessionId,
      path: workspacePath(ctx.cwd, relative),
      ...range,
    });
    return content;
  } catch (error) {
    ctx.trace('fs_error', { op, path: relative, ...rpcError(error) });
    return undefined;
  }
}

async function writeThroughClient(ctx: TurnContext, relative: string, content: string): Promise<void> {
  try {
    await ctx.client.request(acp.methods.client.fs.writeTextFile, {
      sessionId: ctx.sessionId,
      path: workspacePath(ctx.cwd, relative),
      content,
    });
    ctx.trace('write', { path: relative, chars: content.length });
  } catch (error) {
    ctx.trace('fs_error', { op: 'write', path: relative, ...rpcError(error) });
  }
}
