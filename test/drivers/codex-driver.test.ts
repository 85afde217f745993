import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { runCodex, type CodexRunOptions } from '../../drivers/codex/index.js';
import { DriverResult, type DriverRunInputIn } from '../../drivers/receipt.js';
import { scriptedCodexLaunch, SCRIPTED_MODEL_NAME } from '../../workloads/scripted/responses-codex.js';
import { startResponsesModel, type ScriptedModel } from '../../workloads/scripted/responses-model.js';
import type { ScriptEntry } from '../../workloads/scripted/responses-script.js';
import { codexHomeDir, tempDir } from '../support/temp.js';

// These tests run the REAL `codex app-server` (from the installed @openai/codex) against the
// SCRIPTED loopback model; only the LLM behind Codex is a stand-in.

type Wire = { dir: 'in' | 'out'; msg: Record<string, any> }[];

interface Rig {
  root: string;
  workspace: string;
  model: ScriptedModel;
  input: DriverRunInputIn;
  options: CodexRunOptions;
  wire: Wire;
  pid: () => number;
}

async function rig(t: TestContext, script: ScriptEntry[], extraArgs: string[] = []): Promise<Rig> {
  const root = tempDir('ordivon-codex-');
  const workspace = join(root, 'ws');
  mkdirSync(workspace);
  const model = await startResponsesModel({ script });
  t.after(() => model.close());
  const launch = scriptedCodexLaunch({ modelUrl: model.url, home: codexHomeDir(), extraArgs });
  const wire: Wire = [];
  let pid: number | undefined;
  return {
    root,
    workspace,
    model,
    wire,
    pid: () => pid ?? assert.fail('the app-server was never spawned'),
    input: {
      driver: 'codex',
      runId: `run-${t.name.slice(0, 20).replaceAll(' ', '-')}`,
      command: launch.command,
      args: launch.args,
      env: launch.env,
      cwd: workspace,
      prompt: 'Write result.json describing the answer.',
      contextDigest: `sha256:${'ab'.repeat(32)}`,
      timeoutMs: 30_000,
      graceMs: 2_000,
    },
    options: {
      onWire: (dir, line) => wire.push({ dir, msg: JSON.parse(line) }),
      onSpawn: (spawned) => (pid = spawned),
    },
  };
}

const sent = (wire: Wire, method: string) =>
  wire.filter((w) => w.dir === 'out' && w.msg['method'] === method).map((w) => w.msg);
const received = (wire: Wire, method: string) =>
  wire.filter((w) => w.dir === 'in' && w.msg['method'] === method).map((w) => w.msg);
const replyTo = (wire: Wire, request: Record<string, any>) =>
  wire.find((w) => w.dir === 'out' && w.msg['id'] === request['id'] && !('method' in w.msg))?.msg;

/** A turn whose one shell command needs approval (escalated), then `closing` as its last message. */
const escalatedTurn = (closing: string): ScriptEntry[] => [
  { type: 'shell', command: 'printf approved > approved.txt', escalate: { justification: 'scripted: needs approval' } },
  { type: 'message', text: closing },
];

/** Asserts that codex asked for approval of a command and the driver answered it with `decision`. */
function assertCommandAnswered(wire: Wire, decision: 'accept' | 'decline'): void {
  const [request] = received(wire, 'item/commandExecution/requestApproval');
  assert.ok(request !== undefined && 'id' in request, 'codex asked for approval');
  assert.deepEqual(replyTo(wire, request), { id: request['id'], result: { decision } });
}

/** Living processes whose cwd or environment mentions `root` (the run's temp dir). */
function processesUnder(root: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      if (stat[stat.lastIndexOf(')') + 2] === 'Z') continue;
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      const environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
      if (cwd.startsWith(root) || environ.includes(root)) {
        found.push(`${pid}: ${readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ').slice(0, 100)}`);
      }
    } catch {
      // exited while scanning, or not ours to read
    }
  }
  return found;
}

function assertTreeGone(r: Rig): void {
  assert.throws(() => process.kill(-r.pid(), 0), { code: 'ESRCH' }, 'the process group is gone');
  assert.deepEqual(processesUnder(r.root), [], 'no process of the run is left');
}

const codexVersion = (createRequire(import.meta.url)('@openai/codex/package.json') as { version: string }).version;

describe('codex driver against the real codex app-server', () => {
  it('completes a turn in which codex runs a shell command that writes the artifact', async (t) => {
    const content = '{"answer":42}';
    const r = await rig(t, [
      {
        type: 'shell',
        command: ['sh', '-c', `printf '%s' '${content}' > result.json`],
        usage: { input_tokens: 1200, cached_tokens: 3, output_tokens: 30, reasoning_tokens: 2 },
      },
      {
        type: 'message',
        text: 'result.json written',
        usage: { input_tokens: 1300, cached_tokens: 6, output_tokens: 50, reasoning_tokens: 4 },
      },
    ]);
    const began = performance.now();
    const result = await runCodex(
      { ...r.input, expectedArtifacts: ['result.json', 'absent.json'] },
      new AbortController().signal,
      r.options,
    );
    t.diagnostic(`one codex run (spawn → turn → exit) took ${Math.round(performance.now() - began)} ms`);
    assert.equal(result.ok, true, JSON.stringify(result));
    assert.ok(DriverResult.safeParse(result).success, 'the result is valid DriverResult data');
    const receipt = result.receipt!;

    // Identity, straight from the protocol.
    const threadStart = r.wire.find(
      (w) => w.dir === 'in' && w.msg['id'] === sent(r.wire, 'thread/start')[0]!['id'],
    )!.msg;
    const turnStart = r.wire.find((w) => w.dir === 'in' && w.msg['id'] === sent(r.wire, 'turn/start')[0]!['id'])!.msg;
    assert.equal(receipt.threadId, threadStart['result'].thread.id);
    assert.equal(receipt.sessionId, threadStart['result'].thread.sessionId);
    assert.equal(receipt.turnId, turnStart['result'].turn.id);
    assert.deepEqual(receipt.provider, { name: 'codex', version: codexVersion });
    assert.equal(receipt.model, SCRIPTED_MODEL_NAME);
    assert.equal(receipt.stopReason, 'completed');
    assert.equal(receipt.finalText, 'result.json written');
    assert.equal(receipt.exitCode, 0);

    // Usage exactly as the last thread/tokenUsage/updated reported it; its totals are the script's.
    const usageUpdates = received(r.wire, 'thread/tokenUsage/updated');
    assert.deepEqual(receipt.usage, usageUpdates.at(-1)!['params'].tokenUsage);
    const total = (receipt.usage as { total: Record<string, number> }).total;
    assert.deepEqual(
      [total['inputTokens'], total['cachedInputTokens'], total['outputTokens'], total['reasoningOutputTokens']],
      [2500, 9, 80, 6],
    );

    assert.deepEqual(receipt.counts, {
      messages: 1,
      thoughts: 0,
      toolItemsStarted: 1,
      toolItemsCompleted: 1,
      protocolErrors: 0,
    });
    const digest = `sha256:${createHash('sha256').update(content).digest('hex')}`;
    assert.deepEqual(receipt.artifacts, [{ name: 'result.json', digest, bytes: content.length }]);
    assert.deepEqual(receipt.artifactRefusals, [], 'a missing artifact is not a refusal');
    assert.equal(readFileSync(join(r.workspace, 'result.json'), 'utf8'), content);

    // Codex executed the command and sent its output back to the model.
    assert.equal(r.model.requests.length, 2);
    assert.ok(JSON.stringify(r.model.requests[0]!.body).includes(r.input.prompt!), 'the prompt reached the model');
    assert.deepEqual(
      r.model.requests[1]!.toolOutputs.map((o) => [o.callId, o.exitCode]),
      [['call_scripted_0', 0]],
    );
    const command = received(r.wire, 'item/completed').find((n) => n['params'].item.type === 'commandExecution')!;
    assert.equal(command['params'].item.status, 'completed');
    assert.equal(command['params'].item.cwd, r.workspace);

    // The wire: handshake order, no `jsonrpc` member, thread bound to the workspace.
    const outgoing = r.wire.filter((w) => w.dir === 'out').map((w) => w.msg);
    assert.deepEqual(
      outgoing.slice(0, 4).map((m) => m['method']),
      ['initialize', 'initialized', 'thread/start', 'turn/start'],
    );
    assert.ok(outgoing.every((m) => !('jsonrpc' in m)));
    assert.equal(sent(r.wire, 'thread/start')[0]!['params'].cwd, r.workspace);
    assert.deepEqual(sent(r.wire, 'turn/start')[0]!['params'].input, [
      { type: 'text', text: r.input.prompt, text_elements: [] },
    ]);
    assertTreeGone(r);
  });

  it('ends a turn whose app-server falls silent with heartbeat_timeout, far before its deadline', async (t) => {
    const r = await rig(t, [{ type: 'hang' }]);
    const result = await runCodex(
      { ...r.input, timeoutMs: 600_000, heartbeatMs: 1_500 },
      new AbortController().signal,
      r.options,
    );
    assert.equal(result.ok === false && result.kind, 'timeout');
    assert.equal(result.ok === false && result.code, 'heartbeat_timeout');
    assert.match(result.ok === false ? result.detail : '', /^no line from the app-server for 1500 ms; /);
    assert.equal(result.receipt?.stopReason, 'heartbeat_timeout');
    assertTreeGone(r);
  });

  it('times out a stuck turn: sends turn/interrupt, then leaves no process behind', async (t) => {
    const r = await rig(t, [{ type: 'shell', command: 'sleep 300', yieldTimeMs: 250 }, { type: 'hang' }]);
    const running = runCodex({ ...r.input, timeoutMs: 5_000 }, new AbortController().signal, r.options);
    await r.model.waitForRequests(2); // the command runs in the background; the model now hangs
    assert.ok(
      processesUnder(r.root).some((p) => p.includes('sleep 300')),
      'the background command was running',
    );
    const result = await running;
    assert.equal(result.ok, false);
    assert.equal(result.ok === false && result.kind, 'timeout');
    assert.equal(result.ok === false && result.retryable, true);
    assert.equal(result.ok === false && result.code, 'codex_timeout');
    assert.match(result.ok === false ? result.detail : '', /^no turn\/completed within 5000 ms; /);
    assert.ok(DriverResult.safeParse(result).success);
    t.diagnostic(result.ok === false ? result.detail : '');
    const receipt = result.receipt!;
    assert.equal(receipt.stopReason, 'timeout');
    assert.equal(receipt.counts.toolItemsStarted, 1);
    const [interrupt] = sent(r.wire, 'turn/interrupt');
    assert.deepEqual(interrupt?.['params'], { threadId: receipt.threadId, turnId: receipt.turnId });
    assert.equal(
      received(r.wire, 'turn/completed')[0]?.['params'].turn.status,
      'interrupted',
      'codex acknowledged the interrupt',
    );
    assertTreeGone(r);
  });

  it('stops a running turn when the AbortSignal fires', async (t) => {
    const r = await rig(t, [{ type: 'hang' }]);
    const controller = new AbortController();
    const running = runCodex(r.input, controller.signal, r.options);
    await r.model.waitForRequests(1);
    controller.abort();
    const result = await running;
    assert.equal(result.ok === false && result.kind, 'aborted');
    assert.equal(result.ok === false && result.retryable, false);
    assert.equal(result.receipt?.stopReason, 'aborted');
    assert.ok(result.receipt?.threadId !== undefined && result.receipt.turnId !== undefined);
    assert.equal(sent(r.wire, 'turn/interrupt').length, 1);
    assert.equal(received(r.wire, 'turn/completed')[0]?.['params'].turn.status, 'interrupted');
    assertTreeGone(r);
  });

  it('escalates to SIGTERM and SIGKILL when the tree outlives end of input', async (t) => {
    const r = await rig(t, [{ type: 'hang' }]);
    // A real shell leads the group, ignores SIGTERM (so does its child) and lingers after codex exits.
    const stubborn = {
      ...r.input,
      graceMs: 500,
      command: '/bin/sh',
      args: ['-c', `trap '' TERM; "$0" "$@"; sleep 300`, r.input.command!, ...r.input.args!],
    };
    const controller = new AbortController();
    const running = runCodex(stubborn, controller.signal, r.options);
    await r.model.waitForRequests(1);
    controller.abort();
    const result = await running;
    assert.equal(result.ok === false && result.kind, 'aborted');
    assert.match(result.ok === false ? result.detail : '', /turn interrupted; stopped with SIGKILL$/);
    assert.equal(result.receipt?.signal, 'SIGKILL');
    assertTreeGone(r);
  });

  it('signals codex when end of input never reaches it, and no tool command survives', async (t) => {
    const r = await rig(t, [{ type: 'shell', command: 'sleep 300', yieldTimeMs: 250 }, { type: 'hang' }]);
    // `{ cat; sleep; }` keeps codex's stdin open after ours closes, so only a signal stops it.
    const deaf = {
      ...r.input,
      graceMs: 500,
      command: '/bin/sh',
      args: ['-c', `{ cat; sleep 300; } | "$0" "$@"`, r.input.command!, ...r.input.args!],
    };
    const controller = new AbortController();
    const running = runCodex(deaf, controller.signal, r.options);
    await r.model.waitForRequests(2);
    assert.ok(
      processesUnder(r.root).some((p) => /^\d+: sleep 300/.test(p)),
      'the tool command was running',
    );
    controller.abort();
    const result = await running;
    assert.equal(result.ok === false && result.kind, 'aborted');
    assert.match(result.ok === false ? result.detail : '', /stopped with SIG(TERM|KILL)$/);
    assertTreeGone(r);
  });

  it('kills descendants that left the process group (setsid) when the tree has to be killed', async (t) => {
    const r = await rig(t, []);
    // Not codex: a real shell that never answers, ignores SIGTERM and has a child in its own session,
    // the way codex's sandboxed tool commands are. Only the descendant sweep can reach that child.
    const marker = join(r.root, 'started');
    const tree = {
      ...r.input,
      timeoutMs: 30_000,
      graceMs: 300,
      command: '/bin/sh',
      args: ['-c', `trap '' TERM; setsid sh -c "touch '${marker}'; exec sleep 300" & while :; do sleep 1; done`],
    };
    const controller = new AbortController();
    const running = runCodex(tree, controller.signal, r.options);
    while (!existsSync(marker)) await new Promise((resolve) => setImmediate(resolve));
    assert.ok(
      processesUnder(r.root).some((p) => p.includes('exec sleep 300') || /^\d+: sleep 300/.test(p)),
      'the detached child was running',
    );
    controller.abort();
    const result = await running;
    assert.equal(result.ok === false && result.kind, 'aborted');
    assert.match(result.ok === false ? result.detail : '', /turn not acknowledged; stopped with SIGKILL$/);
    assertTreeGone(r);
  });

  it('does not start codex when the signal is already aborted', async (t) => {
    const r = await rig(t, []);
    const controller = new AbortController();
    controller.abort();
    const result = await runCodex(r.input, controller.signal, r.options);
    assert.equal(result.ok === false && result.kind, 'aborted');
    assert.equal(r.wire.length, 0);
    assert.equal(r.model.requests.length, 0);
  });

  it('answers a command approval with accept under an explicit accept policy: the escalated command runs', async (t) => {
    const r = await rig(t, escalatedTurn('done'));
    const result = await runCodex(
      { ...r.input, policy: { approvals: 'accept' } },
      new AbortController().signal,
      r.options,
    );
    assert.equal(result.ok, true, JSON.stringify(result));
    assertCommandAnswered(r.wire, 'accept');
    assert.equal(readFileSync(join(r.workspace, 'approved.txt'), 'utf8'), 'approved');
    assert.equal(result.receipt.counts.toolItemsCompleted, 1);
    assertTreeGone(r);
  });

  it('routes a command approval by default: escalated and declined, then accepted under a grant of its key', async (t) => {
    const script = escalatedTurn('done');
    const first = await rig(t, script);
    const asked = await runCodex(first.input, new AbortController().signal, first.options);
    assert.equal(asked.ok, true, JSON.stringify(asked));
    assertCommandAnswered(first.wire, 'decline');
    assert.equal(existsSync(join(first.workspace, 'approved.txt')), false);
    const [record] = asked.receipt.permissions ?? [];
    assert.deepEqual(
      [record?.answer, record?.reason, record?.evidence.kind],
      ['escalate', 'unknown_consequence', 'execute'],
    );
    assert.match(record!.evidence.command ?? '', /printf approved > approved\.txt/);

    const later = await rig(t, script);
    const grants = [{ key: record!.evidence.key, requestId: 't/permission/x', by: 'operator' }];
    const allowed = await runCodex({ ...later.input, policy: { grants } }, new AbortController().signal, later.options);
    assert.equal(allowed.ok, true, JSON.stringify(allowed));
    assertCommandAnswered(later.wire, 'accept');
    assert.equal(readFileSync(join(later.workspace, 'approved.txt'), 'utf8'), 'approved');
    assert.deepEqual(
      allowed.receipt.permissions?.map((p) => [p.evidence.key, p.answer, p.reason]),
      [[record!.evidence.key, 'allow', 'approved']],
    );
  });

  it('answers a command approval with decline under a decline policy: nothing runs', async (t) => {
    const r = await rig(t, escalatedTurn('could not run it'));
    const result = await runCodex(
      { ...r.input, policy: { approvals: 'decline' } },
      new AbortController().signal,
      r.options,
    );
    assert.equal(result.ok, true, JSON.stringify(result));
    assertCommandAnswered(r.wire, 'decline');
    assert.equal(existsSync(join(r.workspace, 'approved.txt')), false);
    const item = received(r.wire, 'item/completed').find((n) => n['params'].item.type === 'commandExecution');
    assert.equal(item?.['params'].item.status, 'declined');
    assert.equal(r.model.requests[1]?.toolOutputs.length, 1, 'the model was told about the refusal');
    assert.equal(result.receipt.finalText, 'could not run it');
  });

  it('answers a server request it does not serve with a JSON-RPC error, and the turn goes on', async (t) => {
    const question = {
      id: 'q1',
      header: 'Pick',
      question: 'Which one?',
      options: [
        { label: 'a', description: 'A' },
        { label: 'b', description: 'B' },
      ],
    };
    // This feature flag lets the model ask the user questions outside plan mode (server request item/tool/requestUserInput).
    const r = await rig(
      t,
      [
        { type: 'tool', name: 'request_user_input', arguments: { questions: [question] } },
        { type: 'message', text: 'went on' },
      ],
      ['-c', 'features.default_mode_request_user_input=true'],
    );
    const result = await runCodex(r.input, new AbortController().signal, r.options);
    assert.equal(result.ok, true, JSON.stringify(result));
    const [request] = received(r.wire, 'item/tool/requestUserInput');
    assert.ok(request !== undefined && 'id' in request, 'codex asked the user a question');
    const reply = replyTo(r.wire, request);
    assert.equal(reply?.['error']?.code, -32601);
    assert.equal(received(r.wire, 'serverRequest/resolved')[0]?.['params'].requestId, request['id']);
    assert.equal(result.receipt.finalText, 'went on');
  });

  it('escalates a file-change approval (a patch outside the workspace) by default: declined, its path in the evidence', async (t) => {
    const root = tempDir('ordivon-codex-outside-');
    const outside = join(root, 'outside.txt');
    const patch = `apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: ${outside}\n+hello\n*** End Patch\nEOF`;
    // With /tmp excluded from the writable roots, a patch outside the workspace needs approval.
    const r = await rig(
      t,
      [
        { type: 'shell', command: patch },
        { type: 'message', text: 'patch refused' },
      ],
      ['-c', 'sandbox_workspace_write.exclude_slash_tmp=true'],
    );
    const result = await runCodex(r.input, new AbortController().signal, r.options);
    assert.equal(result.ok, true, JSON.stringify(result));
    const [record] = result.receipt.permissions ?? [];
    assert.deepEqual([record?.answer, record?.reason, record?.evidence.kind], ['escalate', 'not_private', 'edit']);
    assert.ok(record?.evidence.paths.includes(outside), JSON.stringify(record?.evidence));
    const [request] = received(r.wire, 'item/fileChange/requestApproval');
    assert.ok(request !== undefined, 'codex asked to approve the file change');
    assert.deepEqual(replyTo(r.wire, request), { id: request['id'], result: { decision: 'decline' } });
    assert.equal(existsSync(outside), false);
    const item = received(r.wire, 'item/completed').find((n) => n['params'].item.type === 'fileChange');
    assert.equal(item?.['params'].item.status, 'declined');
    assert.deepEqual([result.receipt.counts.toolItemsStarted, result.receipt.counts.toolItemsCompleted], [1, 1]);
  });
});
