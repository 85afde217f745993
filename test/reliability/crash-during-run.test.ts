import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openHost } from '../../host/host.js';
import { descendantsOf, memberRunning, type TreeMember } from '../../os/index.js';
import type { HarnessRunReceipt } from '../../drivers/receipt.js';
import { hermesLikeLaunch } from '../../workloads/scripted/hermes-script.js';
import { hermesLikeScript } from '../../workloads/hamilton-v1/behaviours.js';
import { loadWorkload } from '../../cli/workload.js';
import { tempDir } from '../support/temp.js';

const RUNNER = fileURLToPath(new URL('../fixtures/reliability/host-runner.js', import.meta.url));

describe('crash during a run', () => {
  // The provider's whole tree as the killed Host left it: bwrap, and the agent inside its pid
  // namespace (whose own pid, in its trace, is the namespace's), each by host pid and start time.
  let tree: TreeMember[] = [];
  it(
    'SIGKILL of the Host while a harness run is in flight: the fresh Host finds the job abandoned, never sends it again, and dispatches the stage itself under the next generation, which finishes the work',
    { timeout: 120_000 },
    async () => {
      const root = join(tempDir('ordivon-crash-run-'), 'state');
      const traceFile = join(tempDir(), 'agent-trace.jsonl');
      const child = spawn(process.execPath, [RUNNER, root, traceFile], { stdio: ['ignore', 'pipe', 'inherit'] });
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
      const first = (await lines.next()).value as string;
      assert.match(first, /^running \S+ \d+$/);
      const [, taskId, recordedPid] = first.split(' ') as [string, string, string];
      tree = descendantsOf(Number(recordedPid));
      assert.ok(tree.length > 0, 'the provider group has no processes under it');
      const closed = new Promise((resolve) => child.on('close', resolve));
      child.kill('SIGKILL');
      await closed;

      const workload = loadWorkload('hamilton-v1');
      const diagnose = {
        driver: 'acp' as const,
        ...hermesLikeLaunch(hermesLikeScript(workload, 'diagnose')),
        timeoutMs: 60_000,
      };
      // The restarted Host runs the real diagnosis under `stuck`: its retry assigns the same harness.
      const host = await openHost({ state: root, harnesses: { stuck: diagnose, diagnose } });
      try {
        const sup = host.supervisor;
        // the in-flight run is not blindly redispatched: its one job is found and ends abandoned
        await sup.waitFor(taskId, ['waiting'], ['completed', 'cancelled', 'blocked']);
        const jobs = await host.runtime.findJobs({ clientRequestId: `${taskId}/a1/g1/run` });
        assert.equal(jobs.length, 1, 'the interrupted dispatch was sent again');
        assert.equal(jobs[0]!.state, 'abandoned');
        assert.match(readFileSync(traceFile, 'utf8'), /"session\/prompt"/, 'the agent never got its prompt');
        // the job recorded the provider's group, and the fresh Runtime's recovery killed all of it
        assert.equal(jobs[0]!.process?.pid, Number(recordedPid), 'the job did not record the provider group');
        assert.deepEqual([jobs[0]!.stopReason, jobs[0]!.groupGone], ['executor_gone', true]);
        const observed = sup.events(taskId).filter((e) => e.type === 'run.observe');
        assert.equal(observed.length, 2);
        const data = observed[0]!.data as { jobStatus: string; evidence: object; receiptDigest: string };
        assert.deepEqual([data.jobStatus, Object.keys(data.evidence)], ['abandoned', []]);
        assert.equal(sup.getObject<HarnessRunReceipt>(data.receiptDigest).body.stopReason, 'abandoned');
        assert.deepEqual(
          sup
            .events(taskId)
            .filter((e) => e.type === 'dispatch.intend')
            .map((e) => e.data.clientRequestId),
          [`${taskId}/a1/g1/run`, `${taskId}/a1/g2/run`],
          'the stopped run is dispatched again only under a new request id',
        );

        // The stage's retry policy (default: once) let the Host assign it again itself: no person needed.
        const assignments = sup.events(taskId).filter((e) => e.type === 'assignment.commit');
        assert.deepEqual(
          assignments.map((e) => [e.origin, e.data.generation]),
          [
            ['external', 1],
            ['host', 2],
          ],
        );
        const task = sup.getTask(taskId)!;
        assert.equal(task.context.generation, 2);
        assert.equal(task.context.evidence['diagnosis.json']?.generation, 2);
      } finally {
        await host.stop();
      }
    },
  );

  it("the killed Host's stubborn agent (ignores SIGTERM and stdin closing) is not left running", () => {
    assert.ok(tree.length > 0);
    const running = tree.filter(memberRunning);
    for (const member of running) process.kill(member.pid, 'SIGKILL');
    assert.deepEqual(running, [], 'processes of the provider tree still run after the fresh Host booted');
  });
});
