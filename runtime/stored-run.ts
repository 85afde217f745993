import { createHash } from 'node:crypto';
import type { DriverRunInput } from '../drivers/receipt.js';
import type { CommandRun, VerifyInput } from './dispatch-input.js';
import type { StoredRun } from './job-record.js';

// Environment values and prompts may hold secrets or whole compiled Contexts; a job record keeps
// only their names and digests. Recovery never re-runs a job, so nothing more is needed.

/** The stored form of a `command` run. */
export function storedCommandRun(run: CommandRun): StoredRun {
  return { kind: 'command', command: run.command, args: run.args, envKeys: Object.keys(run.env).sort() };
}

/** The stored form of a `harness` run: prompt replaced by its digest. */
export function storedHarnessRun(input: DriverRunInput): StoredRun {
  return {
    kind: 'harness',
    driver: input.driver,
    runId: input.runId,
    command: input.command,
    args: input.args,
    envKeys: Object.keys(input.env).sort(),
    // Absent when empty, so a record written before envFrom existed names the same request.
    ...(input.envFrom.length === 0 ? {} : { envFrom: input.envFrom }),
    contextDigest: input.contextDigest,
    promptDigest: 'sha256:' + createHash('sha256').update(input.prompt).digest('hex'),
    timeoutMs: input.timeoutMs,
    expectedArtifacts: input.expectedArtifacts,
    ...(input.model === undefined ? {} : { model: input.model }),
  };
}

/** The stored form of a verification run. */
export function storedVerifyRun(input: VerifyInput): StoredRun {
  return {
    kind: 'verify',
    command: input.command,
    args: input.args,
    envKeys: Object.keys(input.env).sort(),
    frozenTests: input.frozenTests,
    sourceExclude: input.sourceExclude,
    ...(input.sourceInclude === undefined ? {} : { sourceInclude: input.sourceInclude }),
  };
}
