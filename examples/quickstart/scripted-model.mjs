// A stand-in for a model API, for trying Loop v0 without a key or a network: a Chat Completions
// endpoint on 127.0.0.1 (port 8931, or $PORT) that answers the quickstart from a script, never
// from a model, and says so (`model: "… (scripted)"`). Each answer is chosen by the stage the
// prompt names and the turns the conversation already holds, so a run that resumes gets the
// answer that comes next.
//
//   node scripted-model.mjs -- COMMAND ARGS…   serves while COMMAND runs, then exits with its code
//   node scripted-model.mjs                    serves until stopped
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';

const FINDINGS = {
  failing: ['parses milliseconds', 'parses a compound duration with milliseconds'],
  cause: 'the unit pattern (h|m|s|ms) tries "m" before "ms"',
};
const call = (name, args) => ({ name, arguments: JSON.stringify(args) });
const TURNS = {
  investigate: [
    call('run_command', { command: 'node --test test/ 2>&1 | grep -E "^not ok|^# (pass|fail)"' }),
    call('write_file', { path: 'findings.json', content: JSON.stringify(FINDINGS, null, 2) + '\n' }),
    call('finish', { summary: 'findings.json names the failing tests and the cause.' }),
  ],
  fix: [
    call('edit_file', { path: 'src/duration.js', old: '(h|m|s|ms)', new: '(ms|h|m|s)' }),
    call('run_command', { command: 'node --test test/ 2>&1 | tail -n 8' }),
    call('write_file', {
      path: 'report.md',
      content: '# Milliseconds parse again\n\nThe unit pattern now tries `ms` before `m`.\n',
    }),
    call('finish', { summary: 'Fixed; report.md written.' }),
  ],
};

/** The scripted tool call that answers this request, or an error message. */
function answerTo(body) {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  const prompt = messages.map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n');
  const stage = /^Stage: (\S+)/m.exec(prompt)?.[1];
  const turn = messages.filter((m) => m.role === 'assistant').length;
  const next = TURNS[stage]?.[turn];
  return next ?? { error: `no scripted answer for stage ${stage ?? '(none named)'}, turn ${turn}` };
}

const sse = (data) => `data: ${JSON.stringify(data)}\n\n`;

const server = createServer((req, res) => {
  let text = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (text += chunk));
  req.on('end', () => {
    if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no such route"}}');
      return;
    }
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"body is not JSON"}}');
      return;
    }
    const answer = answerTo(body);
    if ('error' in answer) {
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: answer.error } }));
      return;
    }
    const chunk = (delta, finish = null, extra = {}) =>
      sse({
        id: 'scripted',
        object: 'chat.completion.chunk',
        model: `${body.model} (scripted)`,
        choices: [{ index: 0, delta, finish_reason: finish }],
        ...extra,
      });
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(
      chunk({
        role: 'assistant',
        tool_calls: [{ index: 0, id: `call_${Date.now()}`, type: 'function', function: answer }],
      }),
    );
    res.write(chunk({}, 'tool_calls', { usage: { prompt_tokens: Math.ceil(text.length / 4), completion_tokens: 40 } }));
    res.end('data: [DONE]\n\n');
  });
});

const port = Number(process.env.PORT ?? 8931);
server.listen(port, '127.0.0.1', () => {
  const command = process.argv.indexOf('--');
  if (command === -1) {
    console.error(`scripted model on http://127.0.0.1:${port}/v1 (stop it with Ctrl-C)`);
    return;
  }
  const [file, ...args] = process.argv.slice(command + 1);
  const child = spawn(file, args, { stdio: 'inherit' });
  child.on('exit', (code, signal) => {
    server.close();
    process.exit(code ?? (signal ? 1 : 0));
  });
});
server.on('error', (error) => {
  console.error(`scripted model: cannot listen on 127.0.0.1:${port}: ${error.message}`);
  process.exit(2);
});
