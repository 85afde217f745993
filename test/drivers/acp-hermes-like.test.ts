import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAcp, type AcpRunOptions } from '../../drivers/acp/index.js';
import { hermesLikeLaunch, type HermesScriptIn } from '../../workloads/scripted/hermes-script.js';
import type { DriverResult, DriverRunInputIn, HarnessRunReceipt } from '../../drivers/receipt.js';
import { DriverRunInput } from '../../drivers/receipt.js';

// Every run here is a real child process speaking ACP over stdio: the SCRIPTED Hermes-like agent.

let root: string;
let n = 0;
before(() => {
  root = mkdtempSync(join(tmpdir(), 'ordivon-acp-hermes-'));
});
after(() => rmSync(root, { recursive: true, force: true }));

interface Case {
  dir: string;
  work: string;
  tracePath: string;
}
function newCase(): Case {
  const dir = join(root, `case-${++n}`);
  const work = join(dir, 'work');
  mkdirSync(work, { recursive: true });
  return { dir, work, tracePath: join(dir, 'trace.jsonl') };
}

function run(
  c: Case,
  script: HermesScriptIn,
  extra: Partial<DriverRunInputIn> = {},
  signal = new AbortController().signal,
  options: AcpRunOptions = {},
): Promise<DriverResult> {
  const input = DriverRunInput.parse({
    driver: 'acp',
    runId: `run-${n}`,
    ...hermesLikeLaunch({ trace: c.tracePath, ...script }),
    cwd: c.work,
    prompt: 'Repair the allocation defect.',
    contextDigest: 'sha256:' + '0'.repeat(64),
    timeoutMs: 20_000,
    // Generous: a well-behaved agent ends the wait at once; rows that must sit out the grace set less.
    graceMs: 3_000,
    ...extra,
  });
  return runAcp(input, signal, options);
}

function trace(c: Case): Array<Record<string, unknown> & { event: string }> {
  return readFileSync(c.tracePath, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}
function agentPid(c: Case): number {
  return trace(c).find((e) => e.event === 'start')!.pid as number;
}
function receiptOf(result: DriverResult): HarnessRunReceipt {
  assert.ok(result.receipt, `expected a receipt, got ${JSON.stringify(result)}`);
  return result.receipt;
}
const sha256 = (bytes: Buffer | string) => 'sha256:' + createHash('sha256').update(bytes).digest('hex');
const assertGroupGone = (pid: number) => assert.throws(() => process.kill(-pid, 0), { code: 'ESRCH' });

describe('acp driver against the scripted Hermes-like agent', () => {
  it('writes an artifact through fs/write_text_file; counts thoughts and messages, keeps the unfinished tool item and has no final text', async () => {
    const c = newCase();
    const result = await run(
      c,
      {
        steps: [
          { do: 'thought', text: 'considering step {i}', repeat: 25 },
          { do: 'tool_call', id: 'tc-0123456789ab', title: 'write_file result.json', kind: 'edit' },
          {
            do: 'permission',
            id: 'tc-0123456789ab',
            title: 'write result.json',
            kind: 'edit',
            locations: ['out/result.json'],
          },
          { do: 'write', path: 'out/result.json', json: { verdict: 'repaired' } },
          { do: 'message', text: '', repeat: 3 },
          { do: 'usage', used: 4321, size: 200000, cost: { amount: 0.02, currency: 'USD' } },
        ],
        promptUsage: { inputTokens: 900, outputTokens: 100, totalTokens: 1000, thoughtTokens: 40 },
      },
      { expectedArtifacts: ['out/result.json'] },
    );
    assert.equal(result.ok, true, JSON.stringify(result));
    const receipt = receiptOf(result);
    assert.deepEqual(receipt.provider, { name: 'hermes-like (scripted)', version: '0.0.0-scripted' });
    assert.equal(receipt.sessionId, 'hermes-like-session-1');
    assert.equal(receipt.protocolVersion, '1');
    assert.equal(receipt.stopReason, 'end_turn');
    assert.deepEqual(receipt.counts, {
      messages: 3,
      thoughts: 25,
      toolItemsStarted: 1,
      toolItemsCompleted: 0,
      protocolErrors: 0,
    });
    assert.equal(receipt.finalText, undefined);
    const written = readFileSync(join(c.work, 'out/result.json'));
    assert.deepEqual(JSON.parse(written.toString()), { verdict: 'repaired' });
    assert.deepEqual(receipt.artifacts, [{ name: 'out/result.json', digest: sha256(written), bytes: written.length }]);
    assert.deepEqual(receipt.usage, {
      promptResponse: { inputTokens: 900, outputTokens: 100, totalTokens: 1000, thoughtTokens: 40 },
      lastUsageUpdate: {
        sessionUpdate: 'usage_update',
        used: 4321,
        size: 200000,
        cost: { amount: 0.02, currency: 'USD' },
      },
    });
    assert.equal(receipt.exitCode, 0);
    assert.ok(trace(c).some((e) => e.event === 'permission' && e.outcome === 'allow'));
    assertGroupGone(agentPid(c));
  });

  it('refuses a write through .. and one through a symlink leading out, with path_escape / symlink_escape, and writes nothing outside', async () => {
    const c = newCase();
    const outside = join(c.dir, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret.txt'), 'not for agents');
    symlinkSync(outside, join(c.work, 'link'));
    const result = await run(
      c,
      {
        steps: [
          { do: 'write', path: '../escape.txt', content: 'escaped' },
          { do: 'write', path: 'link/evil.txt', content: 'escaped' },
          { do: 'write', path: join(c.dir, 'absolute.txt'), content: 'escaped' },
          { do: 'read', path: 'link/secret.txt' },
          { do: 'write', path: 'inside.txt', content: 'fine' },
        ],
      },
      { expectedArtifacts: ['inside.txt'] },
    );
    assert.equal(result.ok, true, JSON.stringify(result));
    const receipt = receiptOf(result);
    assert.deepEqual(
      receipt.artifactRefusals.map((r) => [r.name, r.code]),
      [
        [`fs/write_text_file:${c.work}/../escape.txt`, 'path_escape'],
        [`fs/write_text_file:${c.work}/link/evil.txt`, 'symlink_escape'],
        [`fs/write_text_file:${join(c.dir, 'absolute.txt')}`, 'path_escape'],
        [`fs/read_text_file:${c.work}/link/secret.txt`, 'symlink_escape'],
      ],
    );
    // The agent got JSON-RPC errors whose data carries our code; it never saw the secret.
    const errors = trace(c).filter((e) => e.event === 'fs_error');
    assert.deepEqual(
      errors.map((e) => [e.op, e.code, (e.data as { code: string }).code]),
      [
        ['write', -32602, 'path_escape'],
        ['write', -32602, 'symlink_escape'],
        ['write', -32602, 'path_escape'],
        ['read', -32602, 'symlink_escape'],
      ],
    );
    assert.equal(existsSync(join(c.dir, 'escape.txt')), false);
    assert.equal(existsSync(join(outside, 'evil.txt')), false);
    assert.equal(existsSync(join(c.dir, 'absolute.txt')), false);
    assert.equal(readFileSync(join(c.work, 'inside.txt'), 'utf8'), 'fine');
    assert.equal(receipt.artifacts.length, 1);
  });

  for (const row of [
    {
      onCancel: 'ignore' as const,
      graceMs: 300,
      stopReason: 'timeout',
      title: 'ignores session/cancel: the whole process group is killed',
    },
    {
      onCancel: 'answer' as const,
      graceMs: 3_000,
      stopReason: 'cancelled',
      title: "answers session/cancel: the receipt keeps the agent's 'cancelled'",
    },
  ]) {
    it(`times out a hanging turn whose agent ${row.title}`, async () => {
      const c = newCase();
      const result = await run(
        c,
        {
          onCancel: row.onCancel,
          steps: [{ do: 'spawn_sleeper', holdStdout: false }, { do: 'message', text: 'working' }, { do: 'hang' }],
        },
        // Long enough for the agent to reach its hang step even on a loaded box.
        { timeoutMs: 5_000, graceMs: row.graceMs },
      );
      assert.equal(result.ok, false);
      assert.ok(!result.ok);
      assert.equal(result.kind, 'timeout');
      assert.equal(result.retryable, true);
      assert.equal(result.code, 'acp_timeout');
      assert.match(result.detail, /^no answer within 5000 ms; session\/cancel sent/);
      const receipt = receiptOf(result);
      assert.equal(receipt.stopReason, row.stopReason);
      assert.equal(receipt.counts.messages, 1);
      const events = trace(c);
      assert.ok(
        events.some((e) => e.event === 'recv' && e.method === 'session/cancel'),
        'the agent received session/cancel',
      );
      assertGroupGone(agentPid(c));
      const sleeper = events.find((e) => e.event === 'sleeper')!.pid as number;
      assert.throws(() => process.kill(sleeper, 0), { code: 'ESRCH' });
    });
  }

  it('ends a turn whose agent falls silent with heartbeat_timeout, far before its deadline', async () => {
    const c = newCase();
    const result = await run(
      c,
      { onCancel: 'ignore', steps: [{ do: 'message', text: 'working' }, { do: 'hang' }] },
      { timeoutMs: 600_000, heartbeatMs: 1_500, graceMs: 300 },
    );
    assert.ok(!result.ok);
    assert.equal(result.kind, 'timeout');
    assert.equal(result.code, 'heartbeat_timeout');
    assert.match(result.detail, /^no message from the agent for 1500 ms; session\/cancel sent/);
    const receipt = receiptOf(result);
    assert.equal(receipt.stopReason, 'heartbeat_timeout');
    assert.equal(receipt.counts.messages, 1);
    assertGroupGone(agentPid(c));
  });

  it('aborts a running turn through the AbortSignal: session/cancel, then aborted with the receipt', async () => {
    const c = newCase();
    const controller = new AbortController();
    const onWire: AcpRunOptions['onWire'] = (direction, _message, line) => {
      if (direction === 'agent_to_client' && line.includes('"agent_message_chunk"')) controller.abort();
    };
    const result = await run(
      c,
      { steps: [{ do: 'message', text: 'working' }, { do: 'hang' }] },
      {},
      controller.signal,
      { onWire },
    );
    assert.ok(!result.ok);
    assert.equal(result.kind, 'aborted');
    assert.equal(result.retryable, false);
    assert.equal(receiptOf(result).stopReason, 'cancelled');
    assert.ok(trace(c).some((e) => e.event === 'recv' && e.method === 'session/cancel'));
    assertGroupGone(agentPid(c));
  });

  for (const row of [
    { ignoreSigterm: false, signal: 'SIGTERM' },
    { ignoreSigterm: true, signal: 'SIGKILL' },
  ]) {
    it(`ends an agent that ignores stdin close${row.ignoreSigterm ? ' and SIGTERM' : ''} with ${row.signal}, and the run is still ok`, async () => {
      const c = newCase();
      const result = await run(
        c,
        { ignoreStdinClose: true, ignoreSigterm: row.ignoreSigterm, steps: [{ do: 'message', text: 'done' }] },
        { graceMs: 300 },
      );
      assert.equal(result.ok, true, JSON.stringify(result));
      const receipt = receiptOf(result);
      assert.equal(receipt.signal, row.signal);
      assert.equal(receipt.finalText, 'done');
      assertGroupGone(agentPid(c));
    });
  }

  for (const holdStdout of [false, true]) {
    it(`reports process_exited with a receipt when the agent exits mid-turn${holdStdout ? ' while a child keeps its stdout open' : ''}`, async () => {
      const c = newCase();
      const steps: HermesScriptIn['steps'] = [
        ...(holdStdout ? [{ do: 'spawn_sleeper' as const, holdStdout: true }] : []),
        { do: 'thought', text: 'hmm', repeat: 3 },
        { do: 'tool_call', id: 'tc-1', title: 'terminal' },
        { do: 'exit', code: 3 },
      ];
      const result = await run(c, { steps }, { graceMs: holdStdout ? 300 : 3_000 });
      assert.ok(!result.ok);
      assert.equal(result.kind, 'process_exited');
      assert.equal(result.retryable, true);
      assert.equal(result.code, 'acp_process_exited');
      assert.match(result.detail, /^the agent exited \(code 3/);
      const receipt = receiptOf(result);
      assert.equal(receipt.stopReason, 'process_exited');
      assert.equal(receipt.exitCode, 3);
      assert.equal(receipt.sessionId, 'hermes-like-session-1');
      assert.equal(receipt.counts.thoughts, 3);
      assert.equal(receipt.counts.toolItemsStarted, 1);
      assertGroupGone(agentPid(c));
    });
  }

  it('tolerates what real agents do: unannounced tool updates, repeated tool_call, a malformed line, unknown update kinds, string request ids, late updates', async () => {
    const c = newCase();
    const session = 'hermes-like-session-1';
    const line = (o: unknown) => JSON.stringify(o);
    const result = await run(c, {
      steps: [
        { do: 'tool_update', id: 'tc-ghost', status: 'completed', text: 'never announced' },
        { do: 'tool_call', id: 'tc-a', title: 'read' },
        { do: 'tool_call', id: 'tc-a', title: 'read (again)' },
        { do: 'tool_update', id: 'tc-a', status: 'completed' },
        { do: 'tool_update', id: 'tc-a', status: 'completed' },
        { do: 'raw', line: 'this line is not JSON' },
        {
          do: 'raw',
          line: line({
            jsonrpc: '2.0',
            method: 'session/update',
            params: { sessionId: session, update: { sessionUpdate: 'future_kind', x: 1 } },
          }),
        },
        {
          do: 'raw',
          line: line({
            jsonrpc: '2.0',
            method: 'session/update',
            params: {
              sessionId: session,
              update: { sessionUpdate: 'tool_call_update', toolCallId: 'tc-b', status: 'weird_status' },
            },
          }),
        },
        {
          do: 'raw',
          line: line({
            jsonrpc: '2.0',
            id: 'req-abc',
            method: 'fs/write_text_file',
            params: { sessionId: session, path: `${c.work}/string-id.txt`, content: 's' },
          }),
        },
        { do: 'message', text: 'Done.' },
      ],
      afterAnswer: [
        { do: 'message', text: ' (late)' },
        { do: 'thought', text: 'late thought' },
      ],
    });
    assert.equal(result.ok, true, JSON.stringify(result));
    const receipt = receiptOf(result);
    assert.deepEqual(receipt.counts, {
      messages: 2,
      thoughts: 1,
      toolItemsStarted: 3,
      toolItemsCompleted: 2,
      protocolErrors: 1,
    });
    assert.equal(receipt.finalText, 'Done.');
    assert.equal(readFileSync(join(c.work, 'string-id.txt'), 'utf8'), 's');
  });

  for (const row of [
    {
      title: 'a JSON-RPC error answering session/prompt is provider_error with the code and message',
      script: {
        steps: [
          { do: 'message' as const, text: 'Error: model said 400' },
          { do: 'fail' as const, code: -32603, message: 'Internal error: scripted 400' },
        ],
      },
      kind: 'provider_error',
      code: 'acp_agent_error',
      detail: /^session\/prompt failed with -32603 Internal error: scripted 400/,
    },
    {
      title: 'an agent answering another protocol version is protocol_error acp_protocol_version',
      script: { protocolVersion: 2, steps: [] },
      kind: 'protocol_error',
      code: 'acp_protocol_version',
      detail: /^agent answered protocolVersion 2/,
    },
  ]) {
    it(`reports ${row.title}`, async () => {
      const c = newCase();
      const result = await run(c, row.script);
      assert.ok(!result.ok);
      assert.equal(result.kind, row.kind);
      assert.equal(result.code, row.code);
      assert.match(result.detail, row.detail);
      assert.equal(receiptOf(result).stopReason, row.kind);
      assertGroupGone(agentPid(c));
    });
  }

  it('declines permission requests when the policy says decline', async () => {
    const c = newCase();
    const result = await run(
      c,
      {
        steps: [
          { do: 'permission', id: 'tc-1', title: 'write', onReject: 'end_turn' },
          { do: 'write', path: 'not-written.txt', content: 'x' },
        ],
      },
      { policy: { approvals: 'decline' } },
    );
    assert.equal(result.ok, true);
    assert.ok(trace(c).some((e) => e.event === 'permission' && e.outcome === 'deny'));
    assert.equal(existsSync(join(c.work, 'not-written.txt')), false);
  });

  it('expresses a diagnose-and-repair behaviour as data: read, diagnosis.json, source edit, completion.json', async () => {
    const c = newCase();
    mkdirSync(join(c.work, 'src'));
    writeFileSync(join(c.work, 'src/alloc.js'), 'export const size = (n) => n - 1;\n');
    const result = await run(
      c,
      {
        steps: [
          { do: 'read', path: 'src/alloc.js', into: 'source' },
          { do: 'write', path: 'diagnosis.json', json: { defect: 'off-by-one in size()', file: 'src/alloc.js' } },
          { do: 'edit', path: 'src/alloc.js', find: 'n - 1', replace: 'n' },
          { do: 'write', path: 'completion.json', json: { status: 'repaired' } },
          { do: 'message', text: 'Repaired.' },
        ],
      },
      { expectedArtifacts: ['diagnosis.json', 'completion.json', 'missing.json'] },
    );
    assert.equal(result.ok, true, JSON.stringify(result));
    const receipt = receiptOf(result);
    assert.equal(readFileSync(join(c.work, 'src/alloc.js'), 'utf8'), 'export const size = (n) => n;\n');
    assert.deepEqual(
      receipt.artifacts.map((a) => [a.name, a.digest]),
      ['diagnosis.json', 'completion.json'].map((name) => [name, sha256(readFileSync(join(c.work, name)))]),
    );
    // A missing artifact is not a driver failure and not a refusal: the Host decides.
    assert.deepEqual(receipt.artifactRefusals, []);
  });

  it('reports a scripted agent with an invalid script as process_exited with the script error code and field path', async () => {
    const c = newCase();
    const input = DriverRunInput.parse({
      driver: 'acp',
      runId: 'bad-script',
      ...hermesLikeLaunch({}),
      env: { HERMES_LIKE_SCRIPT: JSON.stringify({ steps: [{ do: 'thought', text: 7 }] }) },
      cwd: c.work,
      prompt: 'x',
      contextDigest: 'sha256:x',
      timeoutMs: 20_000,
      graceMs: 3_000,
    });
    const result = await runAcp(input, new AbortController().signal);
    assert.ok(!result.ok);
    assert.equal(result.kind, 'process_exited');
    assert.match(result.detail, /script_invalid: steps\.0\.text/);
    assert.equal(receiptOf(result).exitCode, 2);
  });

  it('returns spawn_failed for a command that does not exist, and invalid_input for a bad input', async () => {
    const c = newCase();
    const missing = await runAcp(
      DriverRunInput.parse({
        driver: 'acp',
        runId: 'r',
        command: join(c.dir, 'no-such-agent'),
        cwd: c.work,
        prompt: 'x',
        contextDigest: 'sha256:x',
        timeoutMs: 1000,
      }),
      new AbortController().signal,
    );
    assert.ok(!missing.ok);
    assert.equal(missing.kind, 'spawn_failed');
    assert.equal(missing.code, 'acp_spawn_failed');
    assert.match(missing.detail, /ENOENT/);
    assert.doesNotMatch(missing.detail, /^acp_/);
    const invalid = await runAcp(
      {
        driver: 'acp',
        runId: 'r',
        command: 'x',
        cwd: c.work,
        prompt: 'x',
        contextDigest: 'sha256:x',
        timeoutMs: -5,
      } as never,
      new AbortController().signal,
    );
    assert.ok(!invalid.ok);
    assert.equal(invalid.kind, 'invalid_input');
    assert.equal(invalid.code, 'invalid_input');
    assert.equal(invalid.path, 'timeoutMs');
    assert.match(invalid.detail, /timeoutMs: /);
  });
});
