import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readLogFile } from '../../drivers/loop/step-log.js';
import { startAnthropicModel } from '../../workloads/scripted/anthropic-model.js';
import { startChatModel } from '../../workloads/scripted/chat-model.js';
import { startResponsesModel } from '../../workloads/scripted/responses-model.js';
import { ordivon } from '../support/decision-requests.js';
import { loopRun } from './loop-fixture.js';

const FINDINGS = JSON.stringify({
  failing: ['parses milliseconds'],
  cause: 'the unit pattern (h|m|s|ms) tries m before ms',
});

/** The quickstart's two stages as a model would work them through Loop v0's tools. */
const QUICKSTART = [
  { name: 'run_command', arguments: { command: 'node --test test/' } },
  { name: 'write_file', arguments: { path: 'findings.json', content: FINDINGS } },
  { name: 'finish', arguments: { summary: 'milliseconds fail: m is tried before ms' } },
  { name: 'edit_file', arguments: { path: 'src/duration.js', old: '(h|m|s|ms)', new: '(ms|h|m|s)' } },
  { name: 'write_file', arguments: { path: 'report.md', content: '# Milliseconds parse again\n\nms before m.\n' } },
  { name: 'finish', arguments: { summary: 'fixed' } },
];

async function startModel(format: 'chat-completions' | 'responses' | 'anthropic-messages') {
  if (format === 'chat-completions')
    return startChatModel({
      script: {
        turns: QUICKSTART.map((call) => ({
          toolCalls: [call],
          usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
          hang: false,
        })),
      },
    });
  // These servers pick a step by how many answers the conversation holds, and each stage's run
  // starts a conversation of its own: the step is chosen by the stage its first message names.
  const script = [0, 1, 2].map((i) => ({ body }: { body: unknown }) => ({
    type: 'tool' as const,
    ...QUICKSTART[JSON.stringify(body).includes('Stage: fix') ? i + 3 : i]!,
  }));
  return format === 'responses' ? startResponsesModel({ script }) : startAnthropicModel({ script });
}

describe(
  'ordivon run with Loop v0 (driver loop) against scripted models of each wire format',
  { timeout: 180_000 },
  () => {
    for (const format of ['chat-completions', 'responses', 'anthropic-messages'] as const)
      it(`${format}: completes the quickstart, its artifacts admitted and verified as any driver's`, async (t) => {
        const model = await startModel(format);
        t.after(() => model.close());
        const { state, args } = loopRun(format, model.url, 'LOOP_TEST_KEY');
        process.env['LOOP_TEST_KEY'] = 'sk-loop-test';
        const r = await ordivon(...args, '--json');
        assert.equal(r.status, 0, r.stderr);
        const out = JSON.parse(r.stdout) as {
          completed: boolean;
          outcome: { resultArtifact: string; evidence: object };
        };
        assert.equal(out.completed, true);
        assert.equal(out.outcome.resultArtifact, 'report.md');
        assert.deepEqual(Object.keys(out.outcome.evidence).sort(), ['findings.json', 'report.md']);
        assert.equal(model.requests.length, 6, 'one model call per step, none asked twice');
        // Each stage's run has its own generation's log; the key reached the endpoint and no file of the state root.
        const logs = join(state, 'loops', 'quickstart-1', 'attempt-1');
        assert.deepEqual(
          readLogFile(join(logs, 'g1.jsonl'))
            .map((r) => r.t)
            .filter((t) => t === 'model_response').length,
          3,
        );
        assert.equal(readLogFile(join(logs, 'g2.jsonl'))[0]?.t, 'start');
        assert.doesNotMatch(readFileSync(join(logs, 'g1.jsonl'), 'utf8'), /sk-loop-test/);
      });
  },
);
