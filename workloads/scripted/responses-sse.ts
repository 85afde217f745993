import type { ResponsesStep, ScriptUsage } from './responses-script.js';

/**
 * SCRIPTED MODEL — Server-Sent Event frames of the OpenAI Responses API, as much of it as Codex
 * reads: `response.created`, `response.output_item.added`, `response.output_text.delta`,
 * `response.output_item.done` and `response.completed` (with usage). Ids are derived from the step
 * index, so the same script yields byte-identical streams.
 */
export function sseFrame(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/** Shell-quotes argv items so `exec_command` (which takes one command string) runs them verbatim. */
export function shellJoin(argv: readonly string[]): string {
  return argv
    .map((arg) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`))
    .join(' ');
}

function usageBody(usage: ScriptUsage): Record<string, unknown> {
  return {
    input_tokens: usage.input_tokens,
    input_tokens_details: { cached_tokens: usage.cached_tokens },
    output_tokens: usage.output_tokens,
    output_tokens_details: { reasoning_tokens: usage.reasoning_tokens },
    total_tokens: usage.input_tokens + usage.output_tokens,
  };
}

/** The function call a `shell` or `tool` step makes. */
export function functionCall(step: Extract<ResponsesStep, { type: 'shell' | 'tool' }>): {
  name: string;
  arguments: Record<string, unknown>;
} {
  if (step.type === 'tool') return { name: step.name, arguments: step.arguments };
  const args: Record<string, unknown> = {
    cmd: typeof step.command === 'string' ? step.command : shellJoin(step.command),
  };
  if (step.workdir !== undefined) args['workdir'] = step.workdir;
  if (step.yieldTimeMs !== undefined) args['yield_time_ms'] = step.yieldTimeMs;
  if (step.escalate !== undefined) {
    args['sandbox_permissions'] = 'require_escalated';
    args['justification'] = step.escalate.justification;
  }
  return { name: 'exec_command', arguments: args };
}

/** Frames answering one request with a function call or a final message, closed by `response.completed`. */
export function stepFrames(
  step: Extract<ResponsesStep, { type: 'shell' | 'tool' | 'message' }>,
  index: number,
  usage: ScriptUsage,
): string[] {
  const responseId = `resp_scripted_${index}`;
  const frames = [sseFrame('response.created', { response: { id: responseId } })];
  if (step.type === 'message') {
    const id = `msg_scripted_${index}`;
    frames.push(
      sseFrame('response.output_item.added', { item: { type: 'message', role: 'assistant', id, content: [] } }),
      sseFrame('response.output_text.delta', { item_id: id, delta: step.text }),
      sseFrame('response.output_item.done', {
        item: { type: 'message', role: 'assistant', id, content: [{ type: 'output_text', text: step.text }] },
      }),
    );
  } else {
    const call = functionCall(step);
    frames.push(
      sseFrame('response.output_item.done', {
        item: {
          type: 'function_call',
          id: `fc_scripted_${index}`,
          call_id: `call_scripted_${index}`,
          name: call.name,
          arguments: JSON.stringify(call.arguments),
        },
      }),
    );
  }
  frames.push(sseFrame('response.completed', { response: { id: responseId, usage: usageBody(usage) } }));
  return frames;
}
