import { execa } from 'execa';
import type { DriverResult, HarnessRunReceipt } from '../../drivers/receipt.js';
import { collectArtifacts } from '../../drivers/artifacts.js';
import type { HarnessExecutor } from '../../runtime/index.js';

/**
 * A small real harness executor for tests: runs `input.command` as a process with the prompt on stdin,
 * then reads the expected artifacts through confine. Stands in for the piscina driver pool the Host
 * plugs in; it is not a model of any provider protocol.
 */
export const processHarness: HarnessExecutor = async (input, signal) => {
  const startedAt = new Date();
  const result = await execa(input.command, input.args, {
    cwd: input.cwd,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...input.env },
    extendEnv: false,
    input: input.prompt,
    cancelSignal: signal,
    forceKillAfterDelay: input.graceMs,
    reject: false,
  });
  const { artifacts, artifactRefusals } = collectArtifacts(input);
  const endedAt = new Date();
  const aborted = signal.aborted;
  const receipt: HarnessRunReceipt = {
    driver: input.driver,
    runId: input.runId,
    provider: { name: 'test-process-harness' },
    contextDigest: input.contextDigest,
    ...(input.jobId === undefined ? {} : { jobId: input.jobId }),
    artifacts,
    artifactRefusals,
    counts: { messages: 0, thoughts: 0, toolItemsStarted: 0, toolItemsCompleted: 0, protocolErrors: 0 },
    stopReason: aborted
      ? signal.reason === 'timeout'
        ? 'timeout'
        : 'aborted'
      : result.exitCode === 0
        ? 'completed'
        : 'process_exited',
    exitCode: result.exitCode ?? null,
    signal: result.signal ?? null,
    finalText: String(result.stdout),
    timings: {
      startedAt: startedAt.toISOString(),
      endedAt: endedAt.toISOString(),
      durationMs: endedAt.getTime() - startedAt.getTime(),
    },
  };
  if (aborted) {
    return {
      ok: false,
      kind: signal.reason === 'timeout' ? 'timeout' : 'aborted',
      code: signal.reason === 'timeout' ? 'process_harness_timeout' : 'process_harness_aborted',
      retryable: true,
      detail: 'run was aborted',
      receipt,
    } satisfies DriverResult;
  }
  if (result.exitCode !== 0) {
    return {
      ok: false,
      kind: 'process_exited',
      code: 'process_harness_exited',
      retryable: false,
      detail: `exit ${result.exitCode}`,
      receipt,
    } satisfies DriverResult;
  }
  return { ok: true, receipt };
};
