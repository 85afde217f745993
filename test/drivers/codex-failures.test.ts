import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { runCodex, type CodexRunOptions } from '../../drivers/codex/index.js';
import type { DriverResult, DriverRunInputIn } from '../../drivers/receipt.js';
import { scriptedCodexLaunch } from '../../workloads/scripted/responses-codex.js';
import { startResponsesModel, type ScriptedModel } from '../../workloads/scripted/responses-model.js';
import type { ScriptEntry } from '../../workloads/scripted/responses-script.js';
import { codexHomeDir, tempDir } from '../support/temp.js';

// Failure paths of the codex driver, each against the REAL `codex app-server` (or a real process
// where the point is that it is not one), with the SCRIPTED loopback model behind it.

interface Rig {
  root: string;
  workspace: string;
  model: ScriptedModel;
  input: DriverRunInputIn & { command: string; args: string[] };
  pid: () => number | undefined;
  options: CodexRunOptions;
}

async function rig(t: TestContext, script: ScriptEntry[]): Promise<Rig> {
  const root = tempDir('ordivon-codex-fail-');
  const workspace = join(root, 'ws');
  mkdirSync(workspace);
  const model = await startResponsesModel({ script });
  t.after(() => model.close());
  const launch = scriptedCodexLaunch({ modelUrl: model.url, home: codexHomeDir() });
  let pid: number | undefined;
  return {
    root,
    workspace,
    model,
    pid: () => pid,
    input: {
      driver: 'codex',
      runId: 'run-failure',
      command: launch.command,
      args: launch.args,
      env: launch.env,
      cwd: workspace,
      prompt: 'Do the task.',
      contextDigest: `sha256:${'cd'.repeat(32)}`,
      timeoutMs: 30_000,
      graceMs: 2_000,
    },
    options: { onSpawn: (spawned) => (pid = spawned) },
  };
}

function failure(result: DriverResult): Extract<DriverResult, { ok: false }> {
  assert.equal(result.ok, false, JSON.stringify(result));
  return result as Extract<DriverResult, { ok: false }>;
}

function assertGroupGone(pid: number | undefined): void {
  assert.ok(pid !== undefined);
  assert.throws(() => process.kill(-pid, 0), { code: 'ESRCH' });
}

/** Runs the real app-server behind `sh -c`, which first prints `prelude` on the same stdout. */
function behindNoise(r: Rig, prelude: string): DriverRunInputIn {
  return {
    ...r.input,
    command: '/bin/sh',
    args: ['-c', `${prelude}; exec "$0" "$@"`, r.input.command, ...r.input.args],
  };
}

describe('codex driver failure paths', () => {
  it('reports a failed turn (HTTP 400 from the model) as a non-retryable provider_error with the receipt', async (t) => {
    const r = await rig(t, [{ type: 'http_error', status: 400, message: 'scripted bad request' }]);
    symlinkSync('/etc/hostname', join(r.workspace, 'escape.json'));
    const result = failure(
      await runCodex({ ...r.input, expectedArtifacts: ['escape.json'] }, new AbortController().signal, r.options),
    );
    assert.equal(result.kind, 'provider_error');
    assert.equal(result.retryable, false);
    assert.equal(result.code, 'codex_turn_failed');
    assert.match(result.detail, /scripted bad request/);
    assert.doesNotMatch(result.detail, /^codex_/);
    assert.equal(result.receipt?.stopReason, 'failed');
    assert.ok(result.receipt?.turnId !== undefined);
    assert.deepEqual(result.receipt?.artifactRefusals, [{ name: 'escape.json', code: 'symlink_escape' }]);
    assert.deepEqual(result.receipt?.artifacts, []);
    assertGroupGone(r.pid());
  });

  it('marks a failed turn caused by a server error (HTTP 500) retryable', async (t) => {
    const r = await rig(t, [{ type: 'http_error', status: 500, message: 'scripted outage' }]);
    const result = failure(await runCodex(r.input, new AbortController().signal, r.options));
    assert.equal(result.kind, 'provider_error');
    assert.equal(result.retryable, true);
    assert.match(result.detail, /"internalServerError"/);
  });

  it('counts and skips malformed stdout lines and still completes the turn', async (t) => {
    const r = await rig(t, [{ type: 'message', text: 'fine' }]);
    const result = await runCodex(
      behindNoise(r, `printf 'not json\\n[1]\\n'`),
      new AbortController().signal,
      r.options,
    );
    assert.equal(result.ok, true, JSON.stringify(result));
    assert.equal(result.receipt.counts.protocolErrors, 2);
    assert.equal(result.receipt.finalText, 'fine');
  });

  it('ends the run with protocol_error when malformed lines flood stdout', async (t) => {
    const r = await rig(t, [{ type: 'message', text: 'never reached' }]);
    const result = failure(
      await runCodex(behindNoise(r, `yes '{broken' | head -n 50`), new AbortController().signal, {
        ...r.options,
        maxMalformedLines: 10,
      }),
    );
    assert.equal(result.kind, 'protocol_error');
    assert.equal(result.retryable, false);
    assert.equal(result.code, 'codex_malformed_flood');
    assert.match(result.detail, /^more than 10 unusable lines/);
    assert.equal(result.receipt?.stopReason, 'protocol_error');
    assert.ok((result.receipt?.counts.protocolErrors ?? 0) > 10);
    assertGroupGone(r.pid());
  });

  it('ends the run with protocol_error when codex answers our request with a JSON-RPC error', async (t) => {
    const r = await rig(t, []);
    const options = { ...r.options, sandbox: 'no-such-sandbox' as unknown as CodexRunOptions['sandbox'] };
    const result = failure(await runCodex(r.input, new AbortController().signal, options));
    assert.equal(result.kind, 'protocol_error');
    assert.equal(result.code, 'codex_rpc_error');
    assert.match(result.detail, /^thread\/start failed: -32600 /);
    assert.equal(r.model.requests.length, 0);
    assertGroupGone(r.pid());
  });

  it('reports process_exited with the stderr tail when codex dies before answering', async (t) => {
    const r = await rig(t, []);
    const env = { ...r.input.env, CODEX_HOME: join(r.root, 'missing-codex-home') };
    const result = failure(await runCodex({ ...r.input, env }, new AbortController().signal, r.options));
    assert.equal(result.kind, 'process_exited');
    assert.equal(result.retryable, true);
    assert.equal(result.code, 'codex_process_exited');
    assert.match(result.detail, /^app-server ended \(exit code 1\).*CODEX_HOME/);
    assert.equal(result.receipt?.exitCode, 1);
  });

  it('reports spawn_failed for a command that does not exist', async (t) => {
    const r = await rig(t, []);
    const result = failure(
      await runCodex({ ...r.input, command: join(r.root, 'no-such-codex') }, new AbortController().signal, r.options),
    );
    assert.equal(result.kind, 'spawn_failed');
    assert.equal(result.retryable, false);
    assert.equal(result.code, 'codex_spawn_failed');
    assert.match(result.detail, /ENOENT/);
    assert.doesNotMatch(result.detail, /^codex_/);
    assert.equal(result.receipt?.stopReason, 'spawn_failed');
  });

  it('refuses input that fails validation, naming the field', async (t) => {
    const r = await rig(t, []);
    const result = failure(await runCodex({ ...r.input, timeoutMs: -5 }, new AbortController().signal, r.options));
    assert.equal(result.kind, 'invalid_input');
    assert.equal(result.code, 'invalid_input');
    assert.equal(result.path, 'timeoutMs');
    assert.match(result.detail, /timeoutMs/);
    assert.equal(r.pid(), undefined);
  });
});
