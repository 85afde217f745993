// The agent step every peer of the side-by-side bench takes, in plain JavaScript so that it runs
// next to each peer's own packages in .peers/<peer>/ (peers.bench.ts copies it there with the
// peer's driver). A step is: one model call to the bench's stub (OpenAI Chat Completions,
// streamed, as the Host's Loop v0 calls it), then the tool call the model asked for, run on the
// Task's own work folder. Each system makes the two durable its own way (a journaled ctx.run, a
// DBOS step, a checkpointed graph node); this file only does the work.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** How many recent steps a request carries besides the system prompt and the Task's prompt. */
export const HISTORY_STEPS = 3;

export const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'write_file',
      description: 'Write a file in the work folder.',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string' }, content: { type: 'string' } },
        required: ['path', 'content'],
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'run_command',
      description: 'Run a shell command in the work folder.',
      parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
    },
  },
];

/** The Task's first user message: the stub reads the Task and its length from it. */
export function taskPrompt(taskId, steps) {
  return `bench-task ${taskId} steps ${steps}: take each step the model asks for, then stop.`;
}

/**
 * The request's messages: the system prompt, the Task's prompt, and the last HISTORY_STEPS steps
 * (each `{answer, output}` as the step's two durable records hold them).
 */
export function requestMessages(taskId, steps, history) {
  const messages = [
    { role: 'system', content: 'You are a benchmark agent.' },
    { role: 'user', content: taskPrompt(taskId, steps) },
  ];
  for (const { answer, output } of history.slice(-HISTORY_STEPS)) {
    messages.push({
      role: 'assistant',
      content: answer.content,
      tool_calls: answer.toolCalls.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: c.name, arguments: c.arguments },
      })),
    });
    for (const c of answer.toolCalls) messages.push({ role: 'tool', tool_call_id: c.id, content: output });
  }
  return messages;
}

/** One streamed model call; resolves with `{content, toolCalls: [{id, name, arguments}]}` (JSON-safe). */
export async function callModel(modelUrl, messages, signal) {
  const response = await fetch(`${modelUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({
      model: 'bench',
      stream: true,
      stream_options: { include_usage: true },
      messages,
      tools: TOOLS,
    }),
    signal,
  });
  if (!response.ok) throw new Error(`model answered ${response.status}: ${await response.text()}`);
  const text = await response.text();
  let content = '';
  const calls = new Map();
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: ')) continue;
    const data = line.slice(6);
    if (data === '[DONE]') break;
    const chunk = JSON.parse(data);
    for (const choice of chunk.choices ?? []) {
      if (choice.delta?.content) content += choice.delta.content;
      for (const d of choice.delta?.tool_calls ?? []) {
        const c = calls.get(d.index) ?? { id: '', name: '', arguments: '' };
        if (d.id) c.id = d.id;
        if (d.function?.name) c.name += d.function.name;
        if (d.function?.arguments) c.arguments += d.function.arguments;
        calls.set(d.index, c);
      }
    }
  }
  return { content, toolCalls: [...calls.values()] };
}

/** Runs the answer's tool calls in `workdir`; resolves with their output (one string). */
export async function runTools(workdir, answer) {
  const outputs = [];
  for (const call of answer.toolCalls) outputs.push(await runTool(workdir, call));
  return outputs.join('\n');
}

async function runTool(workdir, call) {
  const args = JSON.parse(call.arguments);
  if (call.name === 'write_file') {
    const file = join(workdir, args.path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, args.content);
    return `wrote ${args.content.length} bytes to ${args.path}`;
  }
  if (call.name === 'run_command') {
    mkdirSync(workdir, { recursive: true });
    return new Promise((resolve, reject) => {
      const child = spawn('sh', ['-c', args.command], { cwd: workdir, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      child.on('error', reject);
      child.on('close', (code) => resolve(`exit ${code}\n${out}`));
    });
  }
  throw new Error(`unknown tool ${call.name}`);
}

/** Whether the model's answer ends the Task (no tool call). */
export function isDone(answer) {
  return answer.toolCalls.length === 0;
}
