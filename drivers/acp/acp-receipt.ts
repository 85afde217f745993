import { basename } from 'node:path';
import { collectArtifacts } from '../artifacts.js';
import type { PermissionLog } from '../permission-route.js';
import { HarnessRunReceipt, type DriverRunInput } from '../receipt.js';
import type { ProcessExit } from '../provider-process.js';
import type { WireLedger } from './wire-ledger.js';
import type { FsRefusal } from './workspace-fs.js';

export interface ReceiptParts {
  run: DriverRunInput;
  ledger: WireLedger;
  fsRefusals: readonly FsRefusal[];
  permissions: PermissionLog;
  stopReason: string;
  exit: ProcessExit | undefined;
  startedAt: Date;
  endedAt: Date;
}

/**
 * Builds the run's receipt from the raw wire ledger (not from SDK-typed objects). Refused client
 * file accesses are recorded in `artifactRefusals` as `<method>:<path>` next to refused artifacts.
 */
export function buildReceipt(parts: ReceiptParts): HarnessRunReceipt {
  const { run, ledger } = parts;
  const collected = collectArtifacts(run);
  const receipt: HarnessRunReceipt = {
    driver: 'acp',
    runId: run.runId,
    provider: ledger.agentInfo ?? { name: basename(run.command) },
    contextDigest: run.contextDigest,
    artifacts: collected.artifacts,
    artifactRefusals: [
      ...collected.artifactRefusals,
      ...parts.fsRefusals.map((r) => ({ name: `${r.method}:${r.path}`, code: r.code })),
    ],
    counts: {
      messages: ledger.messages,
      thoughts: ledger.thoughts,
      toolItemsStarted: ledger.toolStarted.size,
      toolItemsCompleted: ledger.toolFinished.size,
      protocolErrors: ledger.protocolErrors,
    },
    stopReason: parts.stopReason,
    timings: {
      startedAt: parts.startedAt.toISOString(),
      endedAt: parts.endedAt.toISOString(),
      durationMs: Math.max(0, parts.endedAt.getTime() - parts.startedAt.getTime()),
    },
  };
  const model = ledger.model ?? run.model;
  if (model !== undefined) receipt.model = model;
  if (ledger.protocolVersion !== undefined) receipt.protocolVersion = String(ledger.protocolVersion);
  if (ledger.sessionId !== undefined) receipt.sessionId = ledger.sessionId;
  if (run.jobId !== undefined) receipt.jobId = run.jobId;
  if (ledger.usage !== undefined) receipt.usage = ledger.usage;
  Object.assign(receipt, ledger.steps.receiptFields());
  if (parts.exit) {
    receipt.exitCode = parts.exit.exitCode;
    receipt.signal = parts.exit.signal;
  }
  if (ledger.finalText !== undefined) receipt.finalText = ledger.finalText;
  return HarnessRunReceipt.parse({ ...receipt, ...parts.permissions.receiptField() });
}
