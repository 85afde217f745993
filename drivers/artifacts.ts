import { readArtifact } from './confine.js';
import type { ArtifactFound, DriverRunInput, HarnessRunReceipt } from './receipt.js';

/** Refusal code (in `receipt.artifactRefusals`) for an artifact whose read threw, e.g. the workspace vanished. */
export const ARTIFACT_UNREADABLE = 'artifact_unreadable';

/**
 * Reads a run's expected artifacts from its workspace once the run has ended, the same way for
 * every driver. A found artifact is listed with its digest and size. A missing one is not listed
 * at all: the Host decides what an absent artifact means. Anything else the confinement refuses
 * (`path_escape`, `symlink_escape`, `not_a_file`, `artifact_hardlink`, `artifact_too_large`,
 * `artifact_changed`) is listed in `artifactRefusals` with its code, and a read that throws
 * (workspace gone, permissions) as `artifact_unreadable`. Never throws.
 */
export function collectArtifacts(
  input: Pick<DriverRunInput, 'cwd' | 'expectedArtifacts' | 'maxArtifactBytes'>,
): Pick<HarnessRunReceipt, 'artifacts' | 'artifactRefusals'> {
  const artifacts: ArtifactFound[] = [];
  const artifactRefusals: HarnessRunReceipt['artifactRefusals'] = [];
  for (const name of input.expectedArtifacts) {
    let read: ReturnType<typeof readArtifact>;
    try {
      read = readArtifact(input.cwd, name, input.maxArtifactBytes);
    } catch {
      artifactRefusals.push({ name, code: ARTIFACT_UNREADABLE });
      continue;
    }
    if (read.ok) artifacts.push({ name, digest: read.value.digest, bytes: read.value.bytes.length });
    else if (read.code !== 'artifact_missing') artifactRefusals.push({ name, code: read.code });
  }
  return { artifacts, artifactRefusals };
}
