import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { readArtifact } from '../runtime/index.js';
import { digestOf } from '../store/index.js';
import { checkArtifact, contractLabel, type RequiredArtifact } from '../objects/index.js';
import { ARTIFACT_UNREADABLE } from '../drivers/artifacts.js';
import type { ArtifactRefusal, ArtifactRefusalCode } from '../machines/index.js';
import { type TaskHandle, assignedStage } from '../kernel/index.js';
import type { FrontierDeps } from './work-options.js';

/*
 * The stage's artifacts a run (or a branch's merge) brought into the workspace, checked against
 * their contracts and gathered as evidence: what observe-run.ts and branch.ts both commit.
 */

export interface RetainedEvidence {
  objects: Array<{ kind: string; body: unknown }>;
  blobs: Buffer[];
  claims: Array<{ kind: 'evidence'; key: string }>;
  evidence: Record<string, string>;
  refused: Record<string, ArtifactRefusal>;
}

/** The artifact checked against its contract, or why it is not retained; undefined when the run did not produce it. */
type ArtifactCheck =
  | { ok: true; contract: string; digest: string; bytes: Buffer }
  | { ok: false; code: ArtifactRefusalCode; why: string }
  | undefined;

/**
 * Checks each artifact of the Assignment's stage that this run changed (name → the digest it ended
 * with) against its contract and gathers the valid ones as evidence objects, claims and blobs; the
 * others are refused with a step.
 */
export function retainEvidence(
  deps: FrontierDeps,
  task: TaskHandle,
  changed: ReadonlyMap<string, string>,
  workspace: string,
): RetainedEvidence {
  const retained: RetainedEvidence = { objects: [], blobs: [], claims: [], evidence: {}, refused: {} };
  const produces = new Set(assignedStage(task).produces);
  for (const required of task.spec.requiredArtifacts) {
    // Only what this run produced, of what its stage is to produce, counts as its evidence.
    if (!produces.has(required.name)) continue;
    const checked = checkProduced(deps, workspace, required, changed.get(required.name));
    if (checked === undefined) continue;
    if (!checked.ok) {
      retained.refused[required.name] = { code: checked.code, detail: checked.why.slice(0, 2_000) };
      deps.step(task, `${required.name} not retained: ${checked.code}: ${checked.why}`);
      continue;
    }
    const body = {
      taskId: task.taskId,
      generation: task.context.generation,
      name: required.name,
      schema: checked.contract,
      digest: checked.digest,
      bytes: checked.bytes.length,
    };
    retained.objects.push({ kind: 'evidence', body });
    retained.claims.push({ kind: 'evidence', key: digestOf({ kind: 'evidence', body }) });
    retained.blobs.push(checked.bytes);
    retained.evidence[required.name] = checked.digest;
  }
  return retained;
}

/** Reads one required artifact and checks it is the run's bytes and meets its contract. */
function checkProduced(
  deps: FrontierDeps,
  workspace: string,
  required: RequiredArtifact,
  changedDigest: string | undefined,
): ArtifactCheck {
  const maxBytes = deps.options.maxArtifactBytes ?? 1 << 20;
  if (changedDigest === undefined) {
    // The Runtime lists changed files and symlinks; a FIFO, socket or device the run left under
    // an artifact's name is refused here rather than passed over in silence.
    if (isSpecialFile(join(workspace, required.name))) {
      const read = readArtifact(workspace, required.name, maxBytes);
      if (!read.ok) return { ok: false, code: read.code, why: read.detail };
    }
    return undefined;
  }
  let read: ReturnType<typeof readArtifact>;
  try {
    read = readArtifact(workspace, required.name, maxBytes);
  } catch (error) {
    // As the receipt names a read that threw (drivers/artifacts.ts): the run's other artifacts still count.
    return { ok: false, code: ARTIFACT_UNREADABLE, why: (error as Error).message };
  }
  if (!read.ok) return { ok: false, code: read.code, why: read.detail };
  if (read.value.digest !== changedDigest) {
    // The bytes must be the ones the Runtime saw when the run ended, not a later edit.
    return {
      ok: false,
      code: 'artifact_changed',
      why: `${read.value.digest} now; the run ended with ${changedDigest}`,
    };
  }
  const contract = contractLabel(required);
  const checked = checkArtifact(required, read.value.bytes, deps.options.artifactContracts);
  if (!checked.ok) return { ok: false, code: checked.code, why: `${contract}: ${checked.detail}` };
  return { ok: true, contract, digest: read.value.digest, bytes: read.value.bytes };
}

/** A FIFO, socket or device node (never followed: a symlink is not one). */
function isSpecialFile(path: string): boolean {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  return stat !== undefined && (stat.isFIFO() || stat.isSocket() || stat.isCharacterDevice() || stat.isBlockDevice());
}
