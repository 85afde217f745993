/**
 * Embedding example: a plain Node HTTP service that owns a supervisor and exposes ONE route of
 * its own, `POST /repairs`, which turns a small request into a Task and its first Assignment.
 *
 *   node dist/examples/embedded-service.js --state ./.ordivon-example --port 8088
 *   curl -s localhost:8088/repairs -H 'content-type: application/json' \
 *        -d '{"title":"Fix the rounding bug","harness":"codex"}'
 *
 * It listens on 127.0.0.1 only, validates its body with zod (400 `invalid_request` with the
 * field path, nothing written), prints one JSON line `{ "listening": { "url" } }` when ready
 * and drains on SIGTERM (`supervisor.stop()` lets in-flight transitions commit), exiting 0.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { zodIssue } from '../base/index.js';
import { createSupervisor, isCodedError } from '../index.js';

const RepairRequest = z.strictObject({
  title: z.string().min(1).max(500),
  goal: z.string().min(1).max(20_000).default('Find and fix the defect; deliver diagnosis.json and completion.json.'),
  harness: z.enum(['codex', 'hermes']),
});

/** This service's own artifact contracts: zod schemas its Task specs name by `schema`. */
const Diagnosis = z.object({ file: z.string().min(1), cause: z.string().min(10) });
const Completion = z.object({ summary: z.string().min(10), filesChanged: z.array(z.string()).min(1) });

const { values } = parseArgs({ options: { state: { type: 'string' }, port: { type: 'string', default: '0' } } });
const supervisor = createSupervisor({
  ...(values.state ? { state: values.state } : {}),
  purpose: 'embedded-service example',
  artifactContracts: { diagnosis: Diagnosis, completion: Completion },
});
await supervisor.start();

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of req) {
    text += chunk;
    if (text.length > 64 * 1024) throw new Error('body too large');
  }
  return JSON.parse(text);
}

/** The service's own route: create the Task, commit its first Assignment, answer with both results. */
async function repairs(req: IncomingMessage, res: ServerResponse): Promise<void> {
  let raw: unknown;
  try {
    raw = await readBody(req);
  } catch (error) {
    return reply(res, 400, { error: { code: 'invalid_json', message: (error as Error).message } });
  }
  const parsed = RepairRequest.safeParse(raw);
  if (!parsed.success) return reply(res, 400, { error: zodIssue('invalid_request', parsed.error) });
  const { taskId } = await supervisor.createTask({
    title: parsed.data.title,
    goal: parsed.data.goal,
    requiredArtifacts: [
      { name: 'diagnosis.json', schema: 'diagnosis' },
      { name: 'completion.json', schema: 'completion' },
    ],
    stages: [
      { name: 'diagnose', produces: ['diagnosis.json'] },
      { name: 'repair', produces: ['completion.json'], proposesCompletion: true },
    ],
    result: 'completion.json',
  });
  const assigned = await supervisor.send(taskId, {
    type: 'assignment.commit',
    harness: parsed.data.harness,
    stage: 'diagnose',
  });
  reply(res, assigned.admitted ? 201 : 409, { taskId, ...assigned });
}

const server = createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/repairs') {
    // A library error is answered from its fields (`toData()`: code, message, path?, retryable).
    repairs(req, res).catch((error: unknown) =>
      reply(res, 500, {
        error: isCodedError(error)
          ? error.toData()
          : { code: 'internal', message: error instanceof Error ? error.message : String(error) },
      }),
    );
  } else {
    reply(res, 404, { error: { code: 'route_not_found', message: `${req.method} ${req.url}` } });
  }
});
server.listen(Number(values.port), '127.0.0.1', () => {
  const address = server.address() as { port: number };
  console.log(JSON.stringify({ listening: { url: `http://127.0.0.1:${address.port}`, state: supervisor.root } }));
});

process.once('SIGTERM', () => {
  server.close();
  server.closeIdleConnections();
  supervisor.stop().then(
    () => process.exit(0),
    (error) => (console.error(error), process.exit(1)),
  );
});
