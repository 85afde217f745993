import assert from 'node:assert/strict';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { execa } from 'execa';
import { ChatModelScript } from '../../workloads/scripted/chat-model.js';
import { HermesScript } from '../../workloads/scripted/hermes-script.js';
import { ResponsesStep } from '../../workloads/scripted/responses-script.js';
import {
  INVENTED_CANDIDATE,
  ROUND1_BEHAVIOURS,
  SURVEY,
  round1CodexSteps,
  round1Decision,
  round1HermesLikeScript,
  round1OpencodeScript,
} from '../../workloads/round1-v1/behaviours.js';
import { loadWorkload } from '../../cli/workload.js';
import { tempDir } from '../support/temp.js';

// The scripted turns' own shell commands, run as the agents' shell tools would run them (sh in the
// workspace), so quoting mistakes show here rather than as a refused artifact deep in the demo.
// The agents themselves run these scripts in the round1 demo and its test.

const workload = loadWorkload('round1-v1');
const DIGEST = `sha256:${'ab'.repeat(32)}`;

// Only PATH: a `node --test` started from inside this test runner would otherwise inherit
// NODE_TEST_CONTEXT and report to it instead of printing its own summary.
const run = (cwd: string, command: string, args: string[]) =>
  execa(command, args, {
    cwd,
    stdin: 'ignore',
    extendEnv: false,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
  });

function workspace(): string {
  const dir = join(tempDir('ordivon-round1-b-'), 'workspace');
  cpSync(join(workload.dir, 'repo'), dir, { recursive: true });
  return dir;
}

/** The shell commands of a script, in order: Codex's shell steps and opencode's bash tool calls. */
function commandsOf(behaviour: (typeof ROUND1_BEHAVIOURS)[number], agent: 'codex' | 'opencode'): string[][] {
  if (agent === 'codex')
    return round1CodexSteps(behaviour, { contextDigest: DIGEST }).flatMap((step) =>
      step.type === 'shell' ? [typeof step.command === 'string' ? ['sh', '-c', step.command] : step.command] : [],
    );
  return ChatModelScript.parse(round1OpencodeScript(behaviour, { contextDigest: DIGEST })).turns.flatMap((turn) =>
    turn.toolCalls.map((call) => ['sh', '-c', (call.arguments as { command: string }).command]),
  );
}

describe('the round1 scripted behaviours', () => {
  it('every script parses with its driver schema', () => {
    for (const behaviour of ROUND1_BEHAVIOURS) {
      for (const step of round1CodexSteps(behaviour, { contextDigest: DIGEST })) ResponsesStep.parse(step);
      ChatModelScript.parse(round1OpencodeScript(behaviour, { contextDigest: DIGEST }));
      HermesScript.parse(round1HermesLikeScript(behaviour, { contextDigest: DIGEST }));
    }
  });

  it('a decide behaviour without the Context digest is a programming error, not a decision against nothing', () => {
    assert.throws(() => round1CodexSteps('apply', {}), /needs the Context digest/);
  });

  for (const agent of ['codex', 'opencode'] as const) {
    it(`${agent}: the survey writes survey.md starting with a heading and leaves the source alone`, async () => {
      const dir = workspace();
      const before = readFileSync(join(dir, 'src/client.js'), 'utf8');
      for (const [command, ...args] of commandsOf('survey', agent)) await run(dir, command!, args);
      const survey = readFileSync(join(dir, 'survey.md'), 'utf8');
      assert.equal(survey, SURVEY.trimEnd() + '\n');
      assert.match(survey, /^# /);
      assert.equal(readFileSync(join(dir, 'src/client.js'), 'utf8'), before);
    });

    it(`${agent}: each decide behaviour writes decision.json naming the Context digest and its candidate`, async () => {
      const expected = {
        apply: 'apply-v1',
        'follow-readme': 'follow-readme',
        invented: INVENTED_CANDIDATE,
        'declare-done': 'declare-done',
      } as const;
      for (const [behaviour, candidateId] of Object.entries(expected) as Array<[keyof typeof expected, string]>) {
        const dir = workspace();
        for (const [command, ...args] of commandsOf(behaviour, agent)) await run(dir, command!, args);
        const decision = JSON.parse(readFileSync(join(dir, 'decision.json'), 'utf8')) as unknown;
        assert.deepEqual(decision, round1Decision(behaviour, DIGEST));
        assert.deepEqual(
          [(decision as { contextDigest: string }).contextDigest, (decision as { candidateId: string }).candidateId],
          [DIGEST, candidateId],
          behaviour,
        );
      }
    });
  }
});
