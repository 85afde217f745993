import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openHost, type Host } from '../../host/host.js';
import type { HarnessConfig } from '../../frontier/frontier-work.js';
import type { HarnessRunReceipt } from '../../drivers/receipt.js';
import { hermesLikeLaunch, type HermesScriptIn } from '../../workloads/scripted/hermes-script.js';
import { completion, hermesLikeScript } from '../../workloads/hamilton-v1/behaviours.js';
import { loadWorkload } from '../../cli/workload.js';
import { tempDir } from '../support/temp.js';
import { taskRejections } from '../../views/task-runs.js';

const workload = loadWorkload('hamilton-v1');
const COMPLETION = JSON.stringify(completion('claims to be done'), null, 2);
const acp = (script: HermesScriptIn, timeoutMs = 60_000): HarnessConfig => ({
  driver: 'acp',
  ...hermesLikeLaunch(script),
  timeoutMs,
});
const sh = (script: string): HarnessConfig => ({
  driver: 'command',
  command: '/bin/sh',
  args: ['-c', script],
  timeoutMs: 60_000,
});
const outside = join(tempDir('ordivon-outside-'), 'completion.json');

/**
 * Each misbehaving repair harness. The Task already holds a valid diagnosis (generation 1), so the
 * one thing standing between the Task and verification is a valid completion.json from the repair.
 */
const CASES: Array<{
  name: string;
  harness: HarnessConfig;
  stop: RegExp;
  escaped?: () => string;
  /** The code `run.observe` stores for completion.json in `refused`, with its detail. */
  refusal?: { code: string; detail: RegExp };
  protocolErrors?: number;
}> = [
  {
    name: 'a malformed JSON line on the wire, then the turn ends',
    harness: acp({
      steps: [
        { do: 'raw', line: '{"jsonrpc":"2.0","method":' },
        { do: 'raw', line: 'not json at all' },
        { do: 'message', text: 'done, completion.json written' },
      ],
    }),
    stop: /^end_turn$/,
    protocolErrors: 2,
  },
  {
    name: 'a hang (until the run times out)',
    harness: acp({ steps: [{ do: 'thought', text: 'thinking' }, { do: 'hang' }], onCancel: 'ignore' }, 3_000),
    stop: /^timeout$/,
  },
  {
    name: 'an exit mid-turn',
    harness: acp({
      steps: [
        { do: 'thought', text: 'writing…' },
        { do: 'exit', code: 3 },
      ],
    }),
    stop: /^process_exited$/,
  },
  {
    name: 'a failed prompt (JSON-RPC error)',
    harness: acp({ steps: [{ do: 'fail', code: -32603, message: 'model call failed: HTTP 400' }] }),
    stop: /^provider_error$/,
  },
  {
    name: 'a write outside the workspace through ..',
    harness: acp({
      steps: [
        { do: 'write', path: '../completion.json', content: COMPLETION },
        { do: 'message', text: 'completion.json written' },
      ],
    }),
    stop: /^end_turn$/,
    escaped: () => 'completion.json at the Task directory',
  },
  {
    name: 'completion.json as a symlink leading out of the workspace',
    harness: sh(`ln -s ${outside} completion.json && echo done`),
    stop: /^exited$/,
    refusal: { code: 'symlink_escape', detail: /^completion\.json leads outside the workspace through a symlink$/ },
  },
  {
    name: 'an oversized completion.json (2 MiB)',
    harness: sh(`head -c 2097152 /dev/zero | tr '\\0' ' ' > completion.json && echo done`),
    stop: /^exited$/,
    refusal: { code: 'artifact_too_large', detail: /^completion\.json is 2097152 bytes; the limit is 1048576$/ },
  },
  {
    name: 'text claiming success with no artifacts',
    harness: acp({
      steps: [{ do: 'message', text: '{"status":"repaired","tests":"passing","artifact":"completion.json"}' }],
    }),
    stop: /^end_turn$/,
  },
];

describe('misbehaving providers through the Host (real protocols, real Runtime jobs)', { timeout: 240_000 }, () => {
  let host: Host;
  const steps = new Map<string, string[]>();
  before(async () => {
    writeFileSync(outside, COMPLETION);
    const harnesses: Record<string, HarnessConfig> = { diagnose: acp(hermesLikeScript(workload, 'diagnose')) };
    CASES.forEach((c, i) => (harnesses[`bad-${i}`] = c.harness));
    host = await openHost({
      state: tempDir('ordivon-misbehave-'),
      harnesses,
      onStep: (taskId, step) => steps.set(taskId, [...(steps.get(taskId) ?? []), step]),
    });
  });
  after(async () => host.stop());

  CASES.forEach((c, i) => {
    it(`${c.name}: a receipt with a clear stop reason, no outcome, the Task waits`, async () => {
      const sup = host.supervisor;
      const { taskId } = await sup.createTask(workload.spec);
      await sup.send(taskId, { type: 'assignment.commit', harness: 'diagnose', purpose: 'diagnose' });
      await sup.waitFor(taskId, ['waiting']);
      await sup.send(taskId, { type: 'assignment.commit', harness: `bad-${i}`, purpose: 'repair' });
      await sup.waitFor(taskId, ['waiting'], ['completed', 'cancelled', 'blocked']);

      const events = sup.events(taskId);
      const observed = events.filter((e) => e.type === 'run.observe').at(-1)!;
      const receiptDigest = (observed.data as { receiptDigest: string }).receiptDigest;
      const receipt = sup.getObject<HarnessRunReceipt>(receiptDigest).body;
      assert.match(receipt.stopReason, c.stop, `stop reason ${receipt.stopReason}`);
      assert.deepEqual(
        Object.keys((observed.data as { evidence: object }).evidence),
        [],
        'a misbehaving run produced evidence',
      );

      const task = sup.getTask(taskId)!;
      assert.equal(task.state, 'waiting');
      assert.equal(task.context.generation, 2);
      assert.deepEqual(
        taskRejections(events, task.context.lastRejection).map((r) => [r.reason, r.generation]),
        [['missing_artifact', 2]],
      );
      assert.equal(task.context.rejected, 1);
      assert.equal(task.context.evidence['completion.json'], undefined);
      assert.equal(task.context.verification, null);
      assert.ok(!events.some((e) => e.type === 'verification.record'), 'verification ran');
      assert.equal(
        (await host.runtime.findJobs({ clientRequestId: `${taskId}/a1/g2/verify` })).length,
        0,
        'a verification job was dispatched',
      );
      // why the artifact was not retained is recorded durably with the observation
      if (c.refusal) {
        const why = (observed.data as { refused?: Record<string, { code: string; detail: string }> }).refused?.[
          'completion.json'
        ];
        assert.equal(why?.code, c.refusal.code, JSON.stringify(steps.get(taskId)));
        assert.match(why.detail, c.refusal.detail);
      }
      // every malformed line is counted in the receipt, not silently dropped
      assert.equal(receipt.counts.protocolErrors, c.protocolErrors ?? 0);
      if (c.escaped)
        assert.equal(
          existsSync(join(host.supervisor.root, 'workspaces', taskId, 'completion.json')),
          false,
          'the write escaped the workspace',
        );
    });
  });
});
