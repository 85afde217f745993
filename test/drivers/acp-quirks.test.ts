import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runAcp } from '../../drivers/acp/index.js';
import { hermesLikeLaunch, type HermesScriptIn } from '../../workloads/scripted/hermes-script.js';
import { DriverRunInput, type DriverRunInputIn, type HarnessRunReceipt } from '../../drivers/receipt.js';
import { tempDir } from '../support/temp.js';

// What real ACP agents do that the driver must take as it comes (research/acp-real.md §3), each
// played by the SCRIPTED Hermes-like agent so it runs in a second; the real agents are in
// acp-real-agents.test.ts.

async function run(script: HermesScriptIn, extra: Partial<DriverRunInputIn> = {}) {
  const dir = tempDir('ordivon-acp-quirks-');
  const work = join(dir, 'work');
  mkdirSync(work);
  const tracePath = join(dir, 'trace.jsonl');
  const input = DriverRunInput.parse({
    driver: 'acp',
    runId: 'quirk',
    ...hermesLikeLaunch({ trace: tracePath, ...script }),
    cwd: work,
    prompt: 'go',
    contextDigest: 'sha256:' + '4'.repeat(64),
    timeoutMs: 20_000,
    graceMs: 2_000,
    ...extra,
  });
  const result = await runAcp(input, new AbortController().signal);
  assert.equal(result.ok, true, JSON.stringify(result));
  const trace = readFileSync(tracePath, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { receipt: (result as { receipt: HarnessRunReceipt }).receipt, work, trace };
}

describe('acp driver: quirks of real agents', () => {
  it('keeps only the last agent message as the final text: a notice before a tool call (claude-agent-acp) is counted, not kept', async () => {
    const { receipt } = await run({
      steps: [
        { do: 'message', text: '**Warning:** requests go through a gateway.' },
        { do: 'tool_call', id: 't1', title: 'Write', status: 'pending' },
        { do: 'tool_update', id: 't1' },
        { do: 'tool_update', id: 't1', status: 'completed' },
        { do: 'message', text: 'Done: ' },
        { do: 'message', text: 'wrote it.' },
      ],
    });
    assert.equal(receipt.finalText, 'Done: wrote it.');
    assert.equal(receipt.counts.messages, 3);
    assert.deepEqual([receipt.counts.toolItemsStarted, receipt.counts.toolItemsCompleted], [1, 1]);
  });

  it('starts a new message where the messageId changes, and joins chunks that share one', async () => {
    const { receipt } = await run({
      steps: [
        { do: 'message', text: 'notice', messageId: 'm1' },
        { do: 'message', text: 'final ', messageId: 'm2' },
        { do: 'message', text: 'answer', messageId: 'm2' },
      ],
    });
    assert.equal(receipt.finalText, 'final answer');
  });

  it('a tool update after the final text leaves the final text as it is', async () => {
    const { receipt } = await run({
      steps: [
        { do: 'tool_call', id: 't1', title: 'run', status: 'in_progress' },
        { do: 'message', text: 'all done' },
        { do: 'tool_update', id: 't1', status: 'completed' },
      ],
    });
    assert.equal(receipt.finalText, 'all done');
  });

  it('with clientFs false offers no fs capability and serves no fs request: the write fails as an unknown method, nothing is written or refused', async () => {
    const { receipt, work, trace } = await run(
      {
        steps: [
          { do: 'write', path: 'a.txt', content: 'x' },
          { do: 'message', text: 'tried' },
        ],
      },
      { clientFs: false },
    );
    const init = trace.find((e) => e['event'] === 'recv' && e['method'] === 'initialize');
    assert.deepEqual(init?.['fs'], { readTextFile: false, writeTextFile: false });
    const failed = trace.find((e) => e['event'] === 'fs_error');
    assert.equal(failed?.['code'], -32601);
    assert.equal(existsSync(join(work, 'a.txt')), false);
    assert.deepEqual(receipt.artifactRefusals, []);
    assert.equal(receipt.finalText, 'tried');
  });

  it('offers and serves client fs by default (clientFs absent)', async () => {
    const { work, trace } = await run({ steps: [{ do: 'write', path: 'a.txt', content: 'x' }] });
    const init = trace.find((e) => e['event'] === 'recv' && e['method'] === 'initialize');
    assert.deepEqual(init?.['fs'], { readTextFile: true, writeTextFile: true });
    assert.equal(readFileSync(join(work, 'a.txt'), 'utf8'), 'x');
  });

  it('answers a pre-read of a file that does not exist yet with -32002 file_missing, and records no refusal for it', async () => {
    const { receipt, work, trace } = await run({
      steps: [
        { do: 'read', path: 'new.json' },
        { do: 'write', path: 'new.json', content: '{}' },
      ],
    });
    const failed = trace.find((e) => e['event'] === 'fs_error');
    assert.deepEqual([failed?.['code'], (failed?.['data'] as { code?: string })?.code], [-32002, 'file_missing']);
    assert.equal(readFileSync(join(work, 'new.json'), 'utf8'), '{}');
    assert.deepEqual(receipt.artifactRefusals, []);
  });

  it("keeps the prompt answer's _meta.quota as usage.promptQuota (gemini-cli reports tokens only there)", async () => {
    const quota = { token_count: { input_tokens: 600, output_tokens: 60 }, model_usage: [] };
    const { receipt } = await run({ steps: [{ do: 'message', text: 'ok' }], promptMeta: { quota } });
    assert.deepEqual(receipt.usage, { promptQuota: quota });
  });
});
