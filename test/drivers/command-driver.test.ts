import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runCommand } from '../../drivers/command/index.js';
import { DriverResult, DriverRunInput } from '../../drivers/receipt.js';
import { processState, runningInGroup } from '../fixtures/drivers/proc.js';
import { shRun, workspace } from '../fixtures/drivers/run-inputs.js';

const ws = workspace();
after(() => ws.dispose());

const sha256 = (text: string): string => 'sha256:' + createHash('sha256').update(text).digest('hex');
const never = new AbortController().signal;

describe('runCommand', () => {
  it('feeds the prompt on stdin, runs in the workspace, and reports artifacts, final text and line count', async () => {
    const script = [
      'cat > received.txt',
      'printf "working\\n\\n  DONE: wrote report  \\n\\n"',
      'printf \'{"ok":true}\' > report.json',
    ].join('; ');
    const input = DriverRunInput.parse(
      shRun(ws.dir, script, {
        prompt: 'repair the allocator',
        model: 'scripted-model',
        jobId: 'job-7',
        expectedArtifacts: ['report.json', 'absent.json', '../outside.json'],
      }),
    );
    const result = DriverResult.parse(await runCommand(input, never));
    assert.equal(result.ok, true);
    if (!result.ok) return;
    const r = result.receipt;
    assert.equal(readFileSync(join(ws.dir, 'received.txt'), 'utf8'), 'repair the allocator');
    assert.deepEqual(r.artifacts, [{ name: 'report.json', digest: sha256('{"ok":true}'), bytes: 11 }]);
    // the one artifact behaviour of every driver (drivers/artifacts.ts): a missing artifact is not listed
    assert.deepEqual(r.artifactRefusals, [{ name: '../outside.json', code: 'path_escape' }]);
    assert.equal(r.finalText, 'DONE: wrote report');
    assert.equal(r.counts.messages, 2);
    assert.deepEqual(r.usage, {
      stdoutBytes: 'working\n\n  DONE: wrote report  \n\n'.length,
      stdoutLines: 2,
      stderrBytes: 0,
    });
    assert.equal(r.stopReason, 'exited');
    assert.equal(r.exitCode, 0);
    assert.equal(r.provider.name, 'sh');
    assert.equal(r.model, 'scripted-model');
    assert.equal(r.jobId, 'job-7');
    assert.equal(r.contextDigest, input.contextDigest);
  });

  it('reports a non-zero exit as evidence (ok, stop reason exited, exit code kept)', async () => {
    const input = DriverRunInput.parse(shRun(ws.dir, 'echo partial; exit 3'));
    const result = await runCommand(input, never);
    assert.equal(result.ok, true);
    if (!result.ok) return;
    assert.equal(result.receipt.exitCode, 3);
    assert.equal(result.receipt.stopReason, 'exited');
    assert.equal(result.receipt.finalText, 'partial');
  });

  it('names the provider from ORDIVON_PROVIDER_NAME when the env gives one', async () => {
    const input = shRun(ws.dir, 'true');
    input.env = { ...input.env, ORDIVON_PROVIDER_NAME: 'scripted-harness' };
    const result = await runCommand(DriverRunInput.parse(input), never);
    assert.equal(result.ok && result.receipt.provider.name, 'scripted-harness');
  });

  it('returns spawn_failed for a command that does not exist', async () => {
    const input = DriverRunInput.parse({ ...shRun(ws.dir, ''), command: 'ordivon-no-such-binary', args: [] });
    const result = await runCommand(input, never);
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.equal(result.kind, 'spawn_failed');
    assert.equal(result.code, 'command_spawn_failed');
    assert.equal(result.retryable, false);
    assert.match(result.detail, /ENOENT/);
  });

  it('stops a background process the harness left running when it exited', async () => {
    const input = DriverRunInput.parse(shRun(ws.dir, 'sleep 1000 & echo "$$ $!"'));
    const result = await runCommand(input, never);
    assert.equal(result.ok, true);
    if (!result.ok) return;
    const [leader, grandchild] = (result.receipt.finalText ?? '').split(' ').map(Number);
    assert.ok(leader! > 0 && grandchild! > 0, `pids from the harness: ${result.receipt.finalText}`);
    assert.deepEqual(runningInGroup(leader!), []);
    assert.notEqual(processState(grandchild!), 'running');
  });

  it('returns aborted without starting anything when the signal has already fired', async () => {
    const controller = new AbortController();
    controller.abort(new Error('host shutting down'));
    const result = await runCommand(DriverRunInput.parse(shRun(ws.dir, 'touch started')), controller.signal);
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.equal(result.kind, 'aborted');
    assert.throws(() => readFileSync(join(ws.dir, 'started')), /ENOENT/);
  });
});
