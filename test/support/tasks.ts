import type { Supervisor } from '../../kernel/supervisor.js';
import type { HarnessRunReceipt } from '../../drivers/receipt.js';
import { digestOf, sha256 } from '../../store/index.js';

export const SPEC = {
  title: 'Repair the seat allocation defect',
  goal: 'Find and fix the defect; deliver diagnosis.json and completion.json; pass the frozen tests.',
  requiredArtifacts: [{ name: 'diagnosis.json' }, { name: 'completion.json' }],
};

export function receipt(runId: string, contextDigest: string): HarnessRunReceipt {
  return {
    driver: 'command',
    runId,
    provider: { name: 'test' },
    contextDigest,
    artifacts: [],
    artifactRefusals: [],
    counts: { messages: 0, thoughts: 0, toolItemsStarted: 0, toolItemsCompleted: 0, protocolErrors: 0 },
    stopReason: 'exited',
    timings: { startedAt: '2026-01-01T00:00:00.000Z', endedAt: '2026-01-01T00:00:01.000Z', durationMs: 1000 },
  };
}

/** Drives a Task through Host events (as the frontier runner would) to `assigned.running` at `generation`. */
export async function driveToRunning(
  sup: Supervisor,
  taskId: string,
  generation: number,
  harness = 'codex',
): Promise<{ clientRequestId: string; contextDigest: string }> {
  const task = sup.taskActor(taskId)!;
  const ok = (r: { written: boolean; code?: string }, what: string) => {
    if (!r.written) throw new Error(`${what} refused: ${r.code}`);
  };
  if (task.context.generation < generation)
    ok(
      await sup.send(taskId, { type: 'assignment.commit', harness, purpose: generation === 1 ? 'diagnose' : 'repair' }),
      'assignment',
    );
  const context = { taskId, generation, sources: [], prompt: `generation ${generation}` };
  const contextDigest = digestOf({ kind: 'context', body: context });
  ok(
    await task.send({ type: 'context.compile', generation, contextDigest }, 'host', {
      objects: [{ kind: 'context', body: context }],
    }),
    'compile',
  );
  const clientRequestId = `${taskId}/a1/g${generation}/d1`;
  ok(await task.send({ type: 'dispatch.intend', generation, clientRequestId }, 'host'), 'intend');
  ok(await task.send({ type: 'dispatch.ack', clientRequestId, jobId: `job-${generation}` }, 'host'), 'ack');
  return { clientRequestId, contextDigest };
}

/** Records a run result carrying the given artifacts (bytes stored as blobs) as evidence. */
export async function observeRun(
  sup: Supervisor,
  taskId: string,
  generation: number,
  run: { clientRequestId: string; contextDigest: string },
  artifacts: Record<string, string>,
) {
  const task = sup.taskActor(taskId)!;
  const body = receipt(run.clientRequestId, run.contextDigest);
  const blobs = Object.values(artifacts).map((text) => Buffer.from(text));
  const evidence = Object.fromEntries(Object.entries(artifacts).map(([name, text]) => [name, sha256(text)]));
  return task.send(
    {
      type: 'run.observe',
      generation,
      clientRequestId: run.clientRequestId,
      contextDigest: run.contextDigest,
      receiptDigest: digestOf({ kind: 'receipt', body }),
      jobStatus: 'succeeded',
      evidence,
    },
    'host',
    { objects: [{ kind: 'receipt', body }], blobs },
  );
}
