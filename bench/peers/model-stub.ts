// The one model every system of the side-by-side bench (peers.bench.ts) calls: an OpenAI Chat
// Completions endpoint on loopback, streamed as the real API streams it, whose answers are the
// workload's steps. It is also the bench's instrument: every call's arrival time per Task and step
// is recorded here, outside every system under test, so step latency, throughput, resumption
// after a kill and repeated calls are measured the same way for all of them.
//
// A request names its Task and its length in the first user message (`bench-task <id> steps <K>`,
// `taskPrompt`), and the last step done by the newest `steps/<n>.json` path its tool calls name
// (every step's tool call names one), so a system may send its whole history or only a window of it.
// Step n's answer is ~4 KB of text (`payloadBytes`, deterministic per Task and step) with one
// tool call: `write_file steps/<n>.json` (the last step: `result.json`, naming its step), or, on a step `holdAt` names, a `run_command` that
// appends a line to `tools.log` and then sleeps (the step the bench kills a process in). After
// step K the model answers without a tool call: the Task is done.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const TASK_MARK = /bench-task ([A-Za-z0-9._:-]+) steps (\d+)/;
const STEP_MARK = /steps\/(\d{6})\.json/g;

/** The first user message of a Task of `steps` steps (what the stub reads its identity from). */
export function taskPrompt(taskId: string, steps: number): string {
  return `bench-task ${taskId} steps ${steps}: take each step the model asks for, then stop.`;
}

/** What the last step writes: the Task's deliverable. */
export const RESULT_FILE = 'result.json';

export function stepFile(step: number): string {
  return `steps/${String(step).padStart(6, '0')}.json`;
}

export interface StubCall {
  task: string;
  step: number;
  /** performance.now() when the request's body had arrived. */
  at: number;
  bodyBytes: number;
}

export interface Hold {
  task: string;
  step: number;
  /** How long the held step's command sleeps after its line is appended. */
  sleepS: number;
}

export interface ModelStub {
  url: string;
  calls: StubCall[];
  /** Calls per `${task}#${step}` (more than one: the step's model call was made again). */
  count(task: string, step: number): number;
  /** Steps asked for again, in all: the sum over steps of (calls − 1). */
  repeatedCalls(): number;
  setHold(hold: Hold | undefined): void;
  close(): Promise<void>;
}

function payload(task: string, step: number, bytes: number): string {
  // Hex of chained digests: text a compressor cannot fold, the same for every system.
  let out = '';
  let seed = `${task}#${step}`;
  while (out.length < bytes) {
    seed = createHash('sha256').update(seed).digest('hex');
    out += seed;
  }
  return out.slice(0, bytes);
}

interface Answer {
  content: string;
  tool?: { name: string; arguments: string };
}

function answer(task: string, steps: number, last: number, bytes: number, hold: Hold | undefined): Answer {
  const step = last + 1;
  if (step > steps) return { content: `done: ${steps} steps` };
  const content = `step ${step} of ${task}: ${payload(task, step, bytes)}`;
  if (hold && hold.task === task && hold.step === step) {
    const command = `echo ${task} ${step} ${stepFile(step)} >> tools.log && sleep ${hold.sleepS}`;
    return { content, tool: { name: 'run_command', arguments: JSON.stringify({ command }) } };
  }
  const digest = createHash('sha256').update(content).digest('hex');
  const file = JSON.stringify({ task, step, file: stepFile(step), digest });
  // The last step writes the Task's result (what a Host Task requires as its artifact).
  const path = step === steps ? RESULT_FILE : stepFile(step);
  return { content, tool: { name: 'write_file', arguments: JSON.stringify({ path, content: file }) } };
}

const ARGUMENTS = /"arguments":"((?:[^"\\]|\\.)*)"/g;

/**
 * The newest step the conversation took: the highest `steps/<n>.json` its tool calls name. Only
 * tool calls' arguments count, never the rest of the body: a system that starts the conversation
 * over (whose prompt may list the files an earlier try left) is asked every step again.
 */
function lastStep(body: string): number {
  let last = 0;
  for (const args of body.matchAll(ARGUMENTS))
    for (const match of args[1]!.matchAll(STEP_MARK)) last = Math.max(last, Number(match[1]));
  return last;
}

function sse(res: ServerResponse, id: string, a: Answer, promptChars: number): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (body: unknown) => res.write(`data: ${JSON.stringify(body)}\n\n`);
  const base = { id, object: 'chat.completion.chunk', created: 0, model: 'bench-stub' };
  chunk({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: a.content } }] });
  if (a.tool)
    chunk({
      ...base,
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, id: `call-${id}`, type: 'function', function: a.tool }] },
        },
      ],
    });
  chunk({ ...base, choices: [{ index: 0, delta: {}, finish_reason: a.tool ? 'tool_calls' : 'stop' }] });
  chunk({ ...base, choices: [], usage: usage(a, promptChars) });
  res.end('data: [DONE]\n\n');
}

function usage(a: Answer, promptChars: number) {
  const completion = Math.ceil((a.content.length + (a.tool?.arguments.length ?? 0)) / 4);
  const prompt = Math.ceil(promptChars / 4);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function json(res: ServerResponse, id: string, a: Answer, promptChars: number): void {
  const message = a.tool
    ? {
        role: 'assistant',
        content: a.content,
        tool_calls: [{ id: `call-${id}`, type: 'function', function: a.tool }],
      }
    : { role: 'assistant', content: a.content };
  const body = {
    id,
    object: 'chat.completion',
    created: 0,
    model: 'bench-stub',
    choices: [{ index: 0, message, finish_reason: a.tool ? 'tool_calls' : 'stop' }],
    usage: usage(a, promptChars),
  };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export async function startModelStub(options: { payloadBytes: number }): Promise<ModelStub> {
  const calls: StubCall[] = [];
  const counts = new Map<string, number>();
  let hold: Hold | undefined;
  let served = 0;
  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404).end();
      return;
    }
    const mark = TASK_MARK.exec(body);
    if (!mark) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'no bench-task mark in the request' } }));
      return;
    }
    const task = mark[1]!;
    const steps = Number(mark[2]);
    const last = lastStep(body);
    const a = answer(task, steps, last, options.payloadBytes, hold);
    if (last < steps) {
      const key = `${task}#${last + 1}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      calls.push({ task, step: last + 1, at: performance.now(), bodyBytes: body.length });
    }
    const id = `s${++served}`;
    // Streamed when asked, as the real endpoint does (the Host's loop always asks).
    if (body.includes('"stream":true')) sse(res, id, a, body.length);
    else json(res, id, a, body.length);
  };
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => handle(req, res, Buffer.concat(parts).toString('utf8')));
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    calls,
    count: (task, step) => counts.get(`${task}#${step}`) ?? 0,
    repeatedCalls: () => [...counts.values()].reduce((sum, n) => sum + (n - 1), 0),
    setHold: (next) => {
      hold = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
