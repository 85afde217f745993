import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { opencodeCommand, opencodeEnv } from '../../drivers/acp/opencode.js';
import { startChatModel } from '../../workloads/scripted/chat-model.js';
import { scriptedCodexLaunch } from '../../workloads/scripted/responses-codex.js';
import { startResponsesModel } from '../../workloads/scripted/responses-model.js';
import type { ScriptEntry } from '../../workloads/scripted/responses-script.js';
import { OBJECT_KINDS } from '../../objects/index.js';
import { EventStore } from '../../store/index.js';
import {
  FINDINGS,
  NOTES,
  REPORT,
  durationCodexSteps,
  durationOpencodeScript,
} from '../../workloads/duration-v1/behaviours.js';
import { loadWorkload } from '../../cli/workload.js';
import { tempDir } from '../support/temp.js';

const CLI = fileURLToPath(new URL('../../cli/ordivon.js', import.meta.url));
const SPEC = fileURLToPath(new URL('../../../workloads/duration-v1/task.json', import.meta.url));
const TASK = 'duration-run-1';

/** Resolves with the first stderr line of `child` that `match` accepts (rejects if it exits first). */
function lineOf(child: ResultPromise, match: (line: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let partial = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      const found = lines.find(match);
      if (found !== undefined) resolve(found);
    });
    child.then(
      () => reject(new Error('ordivon run exited before the line was printed')),
      () => reject(new Error('ordivon run failed before the line was printed')),
    );
  });
}

describe('a workload of its own shape through ordivon run (duration-v1: three stages, json/file/text artifacts, a result)', () => {
  it('completes with opencode and codex on the two main stages; killed with SIGKILL during a stage and run again, it resumes without dispatching a finished stage again', async () => {
    const dir = tempDir();
    const state = join(dir, 'state');
    const workload = loadWorkload('duration-v1');
    // The fix stage's first run hangs at its first model call, so the test can kill `ordivon run`
    // while it is in flight; every later run of the stage goes through.
    let fixRuns = 0;
    const fixSteps = durationCodexSteps('fix', workload);
    const fixScript: ScriptEntry[] = [() => (++fixRuns === 1 ? { type: 'hang' } : fixSteps[0]!), ...fixSteps.slice(1)];
    const investigate = await startChatModel({ script: durationOpencodeScript('investigate', workload) });
    const fix = await startResponsesModel({ script: fixScript });
    const report = await startChatModel({ script: durationOpencodeScript('report', workload) });
    try {
      const config = join(dir, 'ordivon.config.json');
      writeFileSync(
        config,
        JSON.stringify({
          harnesses: {
            'opencode-a': {
              driver: 'acp',
              ...opencodeCommand(),
              env: opencodeEnv({ home: join(dir, 'home-a'), modelUrl: investigate.url }),
              writable: [join(dir, 'home-a')],
              timeoutMs: 120_000,
            },
            'codex-b': {
              driver: 'codex',
              ...scriptedCodexLaunch({ modelUrl: fix.url, home: join(dir, 'home-b') }),
              timeoutMs: 120_000,
            },
            'opencode-c': {
              driver: 'acp',
              ...opencodeCommand(),
              env: opencodeEnv({ home: join(dir, 'home-c'), modelUrl: report.url }),
              writable: [join(dir, 'home-c')],
              timeoutMs: 120_000,
            },
          },
        }),
      );
      const args = [
        CLI,
        'run',
        '--state',
        state,
        '--config',
        config,
        '--spec',
        SPEC,
        '--task',
        TASK,
        '--stages',
        'investigate=opencode-a,fix=codex-b,report=opencode-c',
      ];

      const first = execa(process.execPath, args, { reject: false, stdin: 'ignore' });
      // The fix stage's run is in flight once its dispatch is acknowledged and the model was asked.
      await lineOf(first, (line) => /fix g2\s+run started/.test(line));
      await fix.waitForRequests(1);
      first.kill('SIGKILL');
      const killed = await first;
      assert.equal(killed.signal, 'SIGKILL');

      const second = await execa(process.execPath, [...args, '--json'], { reject: false, stdin: 'ignore' });
      assert.equal(second.exitCode, 0, `${second.stdout}\n${second.stderr}`);
      assert.match(second.stderr, /resuming task duration-run-1/);
      const answer = JSON.parse(second.stdout) as { completed: boolean; outcome: { result: unknown } };
      assert.equal(answer.completed, true);
      assert.deepEqual(answer.outcome.result, REPORT);

      // Read back from the durable state: which stage was dispatched how often, and what is held.
      const store = EventStore.open({ root: state, kinds: OBJECT_KINDS, readOnly: true });
      try {
        const events = [...store.stream(TASK)].map(({ event }) => event);
        const stages = events
          .filter((e) => e.type === 'assignment.commit')
          .map((e) => (e.data as { stage: string }).stage);
        assert.deepEqual(stages, ['investigate', 'fix', 'fix', 'report'], 'fix again after the kill, nothing else');
        // The killed run's job was found abandoned at the restart: the Host dispatched its stage
        // again under the next generation (the stage's default retry), not `run` by a new Assignment.
        assert.deepEqual(
          events.filter((e) => e.type === 'assignment.commit').map((e) => e.origin),
          ['external', 'external', 'host', 'external'],
        );
        const intents = events.filter((e) => e.type === 'dispatch.intend').length;
        assert.equal(
          intents,
          4,
          'one dispatch per Assignment: the finished investigate stage was not dispatched again',
        );
        const verified = events.find((e) => e.type === 'verification.record' && (e.data as { passed: boolean }).passed);
        const outcomeDigest = (verified?.data as { outcomeDigest: string }).outcomeDigest;
        const outcome = store.getObject<{ evidence: Record<string, string>; resultArtifact: string }>(
          outcomeDigest,
        ).body;
        assert.deepEqual(Object.keys(outcome.evidence).sort(), [
          'findings.json',
          'fix.patch',
          'notes.md',
          'report.json',
        ]);
        assert.equal(outcome.resultArtifact, 'report.json');
        assert.deepEqual(JSON.parse(store.getBlob(outcome.evidence['findings.json']!).toString('utf8')), FINDINGS);
        assert.equal(store.getBlob(outcome.evidence['notes.md']!).toString('utf8'), NOTES.trimEnd() + '\n');
        assert.equal(
          store.getBlob(outcome.evidence['fix.patch']!).toString('utf8'),
          workload.file('scripted/fix.patch'),
        );
        const settled = events.filter((e) => e.type === 'evaluation.settle').map((e) => e.data);
        assert.deepEqual(
          settled.map((d) => (d as { missing?: string[] }).missing ?? []),
          [[], []],
          'investigate and the second fix run settled with everything delivered; the killed run was retried, not settled',
        );
      } finally {
        await store.close();
      }
      assert.equal(fixRuns, 2, 'the fix model saw the killed run and the one that delivered');
    } finally {
      await Promise.all([investigate.close(), fix.close(), report.close()]);
    }
  });
});
