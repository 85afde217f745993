import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCodex } from '../../drivers/codex/index.js';
import type { DriverRunInputIn } from '../../drivers/receipt.js';
import { scriptedCodexLaunch } from '../../workloads/scripted/responses-codex.js';
import { startResponsesModel } from '../../workloads/scripted/responses-model.js';
import { codexHomeDir, tempDir } from '../support/temp.js';

// The REAL `codex app-server` against the SCRIPTED loopback model: one shell step that runs a
// Node test file (node --test spawns the file as a child with piped stdio), then a final message.

const TEST_FILE = "require('node:test')('adds', () => require('node:assert').equal(1 + 1, 2));\n";

/** Runs the step in a fresh workspace with `sandbox` and returns what the shell tool reported. */
async function nodeTestUnder(sandbox: DriverRunInputIn['sandbox']): Promise<{ output: string; sandbox: unknown }> {
  const root = tempDir('ordivon-codex-sandbox-');
  const workspace = join(root, 'ws');
  mkdirSync(workspace);
  mkdirSync(join(workspace, 'test'));
  writeFileSync(join(workspace, 'test', 'adds.test.js'), TEST_FILE);
  const model = await startResponsesModel({
    script: [
      { type: 'shell', command: ['sh', '-c', 'node --test test/ 2>&1 | grep -E "^# (pass|fail)"'] },
      { type: 'message', text: 'ran the test' },
    ],
  });
  try {
    const launch = scriptedCodexLaunch({ modelUrl: model.url, home: codexHomeDir() });
    const threadStarts: unknown[] = [];
    const result = await runCodex(
      {
        driver: 'codex',
        runId: `sandbox-${sandbox ?? 'default'}`,
        ...launch,
        cwd: workspace,
        prompt: 'Run the test.',
        contextDigest: `sha256:${'cd'.repeat(32)}`,
        timeoutMs: 60_000,
        graceMs: 2_000,
        ...(sandbox ? { sandbox } : {}),
      },
      new AbortController().signal,
      {
        onWire: (dir, line) => {
          const msg = JSON.parse(line) as { method?: string; params?: { sandbox?: unknown } };
          if (dir === 'out' && msg.method === 'thread/start') threadStarts.push(msg.params?.sandbox);
        },
      },
    );
    assert.equal(result.ok, true, JSON.stringify(result));
    return { output: model.requests.at(-1)!.toolOutputs.at(-1)?.output ?? '', sandbox: threadStarts[0] };
  } finally {
    await model.close();
  }
}

describe("codex driver: the harness's sandbox setting", () => {
  it('starts the thread in workspace-write by default, and in the configured sandbox when one is given', async () => {
    const confined = await nodeTestUnder(undefined);
    assert.equal(confined.sandbox, 'workspace-write');
    assert.match(confined.output, /# pass 1/);
    const open = await nodeTestUnder('danger-full-access');
    assert.equal(open.sandbox, 'danger-full-access');
    assert.match(open.output, /# pass 1/);
  });
});
