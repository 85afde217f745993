import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { opencodeCommand, opencodeEnv, runAcp } from '../../drivers/acp/index.js';
import { startChatModel, type ChatModel } from '../../workloads/scripted/chat-model.js';
import { DriverRunInput } from '../../drivers/receipt.js';
import { optionalPart } from '../support/optional-part.js';

// The REAL `opencode acp` (opencode-linux-x64, installed into .agents/demo/ by npm run agents:install), offline: its model is the SCRIPTED
// loopback chat-completions server, its HOME/XDG dirs are throwaway, its npm registry black-holed.
// One opencode turn costs ~8–18 s on this 2-core box, so this file runs exactly one.

const { command, args } = opencodeCommand();
// npm run agents:install puts it in .agents/demo/; a machine without it (another
// platform) skips this file, and CI fails instead.
const OPENCODE = optionalPart(
  'opencode',
  existsSync(command) ? command : undefined,
  `${command} is not installed (npm run agents:install)`,
);
const CONTENT = 'hello from the scripted model\n';

let root: string;
let model: ChatModel | undefined;
before(() => {
  root = mkdtempSync(join(tmpdir(), 'ordivon-acp-opencode-'));
});
after(async () => {
  await model?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('acp driver against the real opencode acp', { skip: OPENCODE.skip }, () => {
  it(
    'writes a file through a permitted tool call and fs/write_text_file; the receipt carries session, chunks, tool items, usage as reported, the artifact digest and end_turn',
    { timeout: 180_000 },
    async (t) => {
      OPENCODE.need();
      const home = join(root, 'home');
      const work = join(root, 'work');
      mkdirSync(home);
      mkdirSync(work);
      const target = join(work, 'hello.txt');
      model = await startChatModel({
        script: {
          turns: [
            {
              reasoning: 'The user wants hello.txt; I will call the write tool.',
              toolCalls: [{ name: 'write', arguments: { filePath: target, content: CONTENT } }],
              usage: { prompt_tokens: 111, completion_tokens: 22, total_tokens: 133 },
            },
            {
              text: 'Done: I wrote hello.txt.',
              usage: { prompt_tokens: 222, completion_tokens: 33, total_tokens: 255 },
            },
          ],
        },
      });
      const wire: Array<{ direction: string; message: unknown }> = [];
      const input = DriverRunInput.parse({
        driver: 'acp',
        runId: 'opencode-write',
        command,
        args,
        env: opencodeEnv({ home, modelUrl: model.url, permission: 'ask' }),
        cwd: work,
        prompt: 'Create a file named hello.txt in the current directory containing a greeting.',
        contextDigest: 'sha256:' + '1'.repeat(64),
        timeoutMs: 150_000,
        graceMs: 3_000,
        expectedArtifacts: ['hello.txt'],
      });
      const result = await runAcp(input, new AbortController().signal, {
        onWire: (direction, message) => wire.push({ direction, message }),
      });
      assert.equal(result.ok, true, JSON.stringify(result));
      assert.ok(result.ok);
      const receipt = result.receipt;
      t.diagnostic(`opencode run: ${receipt.timings.durationMs} ms`);

      assert.deepEqual(receipt.provider, { name: 'OpenCode', version: '1.18.33' });
      assert.match(receipt.sessionId ?? '', /^ses_/);
      assert.equal(receipt.model, 'mock/scripted-model');
      assert.equal(receipt.stopReason, 'end_turn');
      assert.equal(receipt.finalText, 'Done: I wrote hello.txt.');
      assert.ok(receipt.counts.messages >= 1);
      assert.equal(receipt.counts.thoughts, 1);
      assert.equal(receipt.counts.toolItemsStarted, 1);
      assert.equal(receipt.counts.toolItemsCompleted, 1);
      assert.equal(receipt.counts.protocolErrors, 0);
      // Usage exactly as opencode reported it: the prompt answer carries the last model call's usage.
      const usage = receipt.usage as { promptResponse: unknown; lastUsageUpdate: { used: number; size: number } };
      assert.deepEqual(usage.promptResponse, { inputTokens: 222, outputTokens: 33, totalTokens: 255 });
      assert.equal(usage.lastUsageUpdate.used, 222);
      assert.equal(usage.lastUsageUpdate.size, 128000);

      assert.equal(readFileSync(target, 'utf8'), CONTENT);
      const digest = 'sha256:' + createHash('sha256').update(CONTENT).digest('hex');
      assert.deepEqual(receipt.artifacts, [{ name: 'hello.txt', digest, bytes: Buffer.byteLength(CONTENT) }]);

      // With `permission: ask` opencode asked first, then wrote through the client's confined fs.
      const requests = wire
        .filter((w) => w.direction === 'agent_to_client')
        .map((w) => w.message as { id?: unknown; method?: string; params?: { path?: string } })
        .filter((m) => m.method !== undefined && m.id !== undefined);
      assert.deepEqual(
        requests.map((m) => m.method),
        ['session/request_permission', 'fs/write_text_file'],
      );
      assert.equal(requests[1]!.params!.path, target);
      const permissionAnswer = wire.find(
        (w) =>
          w.direction === 'client_to_agent' &&
          (w.message as { id?: unknown; result?: unknown }).id === requests[0]!.id &&
          'result' in (w.message as object),
      );
      assert.deepEqual((permissionAnswer!.message as { result: unknown }).result, {
        outcome: { outcome: 'selected', optionId: 'once' },
      });

      // The scripted model saw the title call (it runs alongside the turn, so its position may vary)
      // and both turns; the second turn carried the tool result.
      assert.deepEqual(model.requests.map((r) => r.kind).sort(), ['title', 'turn', 'turn']);
      const secondTurn = model.requests.find((r) => r.turn === 1)!.body as { messages: Array<{ role: string }> };
      assert.ok(secondTurn.messages.some((m) => m.role === 'tool'));
    },
  );
});
