import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runAcp } from '../../drivers/acp/index.js';
import { ACP_AGENTS, agentCommand, defaultAgentsDir } from '../../drivers/acp/acp-agents.js';
import { loadAgentRecipes, scriptedAgentLaunch } from '../../drivers/acp/agent-recipe.js';
import { startAnthropicModel } from '../../workloads/scripted/anthropic-model.js';
import { startGeminiModel } from '../../workloads/scripted/gemini-model.js';
import { startResponsesModel, type ScriptedModel } from '../../workloads/scripted/responses-model.js';
import type { ResponsesStep } from '../../workloads/scripted/responses-script.js';
import { DriverRunInput } from '../../drivers/receipt.js';
import { findExecutable, optionalPart } from '../support/optional-part.js';
import { dnsQueries, foreignPeers, peersIn, tracedLaunch } from '../support/connect-trace.js';
import { tempDir } from '../support/temp.js';

// REAL ACP agents from npm (`npm run agents:install` puts the pinned versions in .agents/), each
// offline against a SCRIPTED loopback model of its own wire API, launched from the recipe users
// get (examples/agents.config.json) with only the model endpoint swapped. One turn each: run a
// shell command, write a JSON file into the workspace with the agent's own tools, answer with a
// final text. strace records every peer the agent's process tree contacted: loopback only.

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const RECIPES = loadAgentRecipes(join(ROOT, 'examples', 'agents.config.json')).harnesses;
const STRACE = optionalPart('strace', findExecutable(['strace']), 'apt-get install strace (.ci/run does)');
const FINAL = 'Done: the command ran and result.json is written.';
// No `$(`: gemini-cli refuses command substitution ("Command injection detected"), `$((…))` included.
const SHELL = "expr 6 '*' 7 | sed 's/^/scripted-/'";
const tokens = (input_tokens: number, output_tokens: number) => ({ input_tokens, output_tokens });
/** The three scripted model turns: shell, write, final text (usage 100/10, 200/20, 300/30). */
const turn = (shell: ResponsesStep, write: ResponsesStep): ResponsesStep[] => [
  { ...shell, usage: tokens(100, 10) } as ResponsesStep,
  { ...write, usage: tokens(200, 20) } as ResponsesStep,
  { type: 'message', text: FINAL, usage: tokens(300, 30) },
];

interface Case {
  harness: string;
  startModel(script: ResponsesStep[]): Promise<ScriptedModel>;
  steps(file: string, content: string): ResponsesStep[];
  /** Tools the agent offered its model in every turn request (the ones the script calls). */
  tools: string[];
  /** Requests the agent sent the client, in order. */
  asked: string[];
  /** The usage as the agent reported it, given the scripted token counts. */
  usage(reported: any): void;
  /**
   * Host names the agent looks up on its own with no setting to stop it (it must never connect
   * to one), pinned so a new one fails the test.
   */
  lookups?: string[];
}

const CASES: Case[] = [
  {
    harness: 'codex-acp',
    startModel: (script) => startResponsesModel({ script }),
    steps: (file, content) =>
      turn(
        { type: 'shell', command: SHELL },
        { type: 'shell', command: ['sh', '-c', 'printf %s "$0" > "$1"', content, file] },
      ),
    tools: ['exec_command'],
    // approval_policy "untrusted": both commands go through the Host's permission policy.
    asked: ['session/request_permission', 'session/request_permission'],
    // Only a usage_update: the last request's context (300 + 30), the model's window.
    usage: (u) => assert.deepEqual([u.lastUsageUpdate.used, u.promptResponse], [330, undefined]),
  },
  {
    harness: 'gemini',
    startModel: (script) => startGeminiModel({ script }),
    steps: (file, content) =>
      turn(
        { type: 'tool', name: 'run_shell_command', arguments: { command: SHELL } },
        { type: 'tool', name: 'write_file', arguments: { file_path: file, content } },
      ),
    tools: ['run_shell_command', 'write_file'],
    asked: ['session/request_permission', 'session/request_permission'],
    // Only `_meta.quota` of the prompt answer: the sums of the three turns.
    usage: (u) => assert.deepEqual(u, { promptQuota: { ...u.promptQuota, token_count: tokens(600, 60) } }),
  },
  {
    harness: 'claude-code',
    startModel: (script) => startAnthropicModel({ script }),
    steps: (file, content) =>
      turn(
        { type: 'tool', name: 'Bash', arguments: { command: SHELL, description: 'Compute' } },
        { type: 'tool', name: 'mcp__acp__Write', arguments: { file_path: file, content } },
      ),
    tools: ['Bash', 'mcp__acp__Write'],
    // mcp__acp__Write writes through the client's confined fs/write_text_file.
    asked: ['session/request_permission', 'session/request_permission', 'fs/write_text_file'],
    usage: (u) => assert.equal(u, undefined),
    // Claude Code 2.1.44 (inside claude-code-acp 0.16.2), authenticated by an API key, asks
    // https://api.anthropic.com/api/claude_code/organizations/metrics_enabled when it flushes its
    // first-party metrics at shutdown, whatever ANTHROPIC_BASE_URL, DISABLE_TELEMETRY or
    // CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC say. Offline the lookup fails and nothing is sent.
    lookups: ['api.anthropic.com'],
  },
  {
    harness: 'claude-agent',
    startModel: (script) => startAnthropicModel({ script }),
    steps: (file, content) =>
      turn(
        { type: 'tool', name: 'Bash', arguments: { command: SHELL, description: 'Compute' } },
        { type: 'tool', name: 'Write', arguments: { file_path: file, content } },
      ),
    tools: ['Bash', 'Write'],
    asked: [],
    usage: (u) =>
      assert.deepEqual(
        [u.promptResponse.inputTokens, u.promptResponse.outputTokens, u.promptResponse.totalTokens],
        [600, 60, 660],
      ),
  },
];

function installed(harness: string) {
  const agent = ACP_AGENTS[RECIPES[harness]!.command];
  const found = agent ? agentCommand(agent, defaultAgentsDir()) : undefined;
  return optionalPart(harness, found?.ok ? found.command : undefined, 'run npm run agents:install');
}

describe('acp driver against real ACP agents from npm, offline', () => {
  for (const c of CASES) {
    const agent = installed(c.harness);
    it(
      `${c.harness}: runs a shell command and writes result.json with its own tools; end_turn, the exact file, two tool items completed, the final text, the scripted requests, loopback only`,
      { skip: agent.skip || STRACE.skip, timeout: 180_000 },
      async (t) => {
        agent.need();
        const strace = STRACE.need();
        const dir = tempDir(`ordivon-acp-${c.harness}-`);
        const work = join(dir, 'work');
        mkdirSync(work);
        const file = join(work, 'result.json');
        const content = JSON.stringify({ harness: c.harness, answer: 42 }) + '\n';
        const model = await c.startModel(c.steps(file, content));
        t.after(() => model.close());
        const launch = scriptedAgentLaunch(RECIPES[c.harness], { modelUrl: model.url, home: join(dir, 'home') });
        assert.ok(launch.ok, JSON.stringify(launch));
        const trace = join(dir, 'connect.trace');
        const input = DriverRunInput.parse({
          driver: 'acp',
          runId: `real-${c.harness}`,
          ...tracedLaunch(strace, trace, launch.value),
          env: launch.value.env,
          clientFs: launch.value.clientFs,
          cwd: work,
          prompt: 'Compute 6*7 in the shell, then write result.json with the answer.',
          contextDigest: 'sha256:' + '2'.repeat(64),
          timeoutMs: 150_000,
          graceMs: 1_500,
          expectedArtifacts: ['result.json'],
          // The scripted shell step is a command: the default policy would decline it and ask a person.
          policy: { approvals: 'accept' },
        });
        const asked: string[] = [];
        const said: string[] = [];
        const result = await runAcp(input, new AbortController().signal, {
          onWire: (direction, message) => {
            const m = message as { id?: unknown; method?: string; params?: any } | undefined;
            if (direction !== 'agent_to_client' || m?.method === undefined) return;
            if (m.id !== undefined) asked.push(m.method);
            const update = m.params?.update;
            if (update?.sessionUpdate === 'agent_message_chunk' && update.content?.text) said.push(update.content.text);
          },
        });
        assert.equal(result.ok, true, JSON.stringify(result));
        assert.ok(result.ok);
        const receipt = result.receipt;
        t.diagnostic(`${c.harness} turn: ${receipt.timings.durationMs} ms`);

        assert.equal(receipt.stopReason, 'end_turn');
        assert.equal(readFileSync(file, 'utf8'), content);
        const digest = 'sha256:' + createHash('sha256').update(content).digest('hex');
        assert.deepEqual(receipt.artifacts, [{ name: 'result.json', digest, bytes: Buffer.byteLength(content) }]);
        assert.deepEqual(receipt.artifactRefusals, []);
        assert.deepEqual(
          [receipt.counts.toolItemsStarted, receipt.counts.toolItemsCompleted, receipt.counts.protocolErrors],
          [2, 2, 0],
        );
        // The final text is the last message only; an adapter's notice earlier in the turn
        // (claude-agent-acp warns that requests go through a gateway) is counted, not kept.
        assert.equal(receipt.finalText, FINAL);
        if (said.join('') !== FINAL) t.diagnostic(`${c.harness} also said: ${said.join('').replace(FINAL, '')}`);
        assert.deepEqual(asked, c.asked);
        c.usage(receipt.usage as any);

        // The model answered the three steps in order; the second request carried the shell's output.
        const turns = model.requests.filter((r) => r.index >= 0 && !r.exhausted);
        assert.deepEqual(
          [...new Set(turns.map((r) => `${r.index}:${r.answeredWith}`))],
          c.steps(file, content).map((s, i) => `${i}:${s.type}`),
        );
        assert.match(turns.find((r) => r.index === 1)!.toolOutputs.at(-1)!.output, /scripted-42/);
        for (const r of turns) for (const tool of c.tools) assert.ok(r.tools?.includes(tool), `${tool} offered`);
        const refused = model.requests.filter(
          (r) => r.answeredWith === 'not_found' || r.answeredWith === 'bad_request',
        );
        assert.deepEqual(
          refused.map((r) => r.path),
          [],
        );

        // The trace saw the agent reach its model (so it traced the right tree), and nothing else.
        const port = Number(new URL(model.url).port);
        assert.ok(
          peersIn(trace).some((p) => p.port === port && p.address === '127.0.0.1'),
          'model connection traced',
        );
        assert.deepEqual(
          foreignPeers(trace).map((p) => p.line),
          [],
        );
        const lookups = dnsQueries(trace);
        if (lookups.length > 0) t.diagnostic(`${c.harness} looked up ${lookups.join(', ')}`);
        assert.deepEqual(
          lookups.filter((name) => !(c.lookups ?? []).includes(name)),
          [],
        );
      },
    );
  }
});
