import { TASK_MACHINE_VERSION } from '../machines/index.js';
import type { EventStore } from '../store/index.js';
import { checkpointEntries } from './checkpoint-store.js';
import { machineCodeHash } from './machine-code.js';
import type { OfferedCheckpoint } from './verifier.js';

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/**
 * The checkpoints of the Tasks in [from, to) as a chain-verified boot offers them to the verifier
 * (`OfferedCheckpoint`), read with one cursor: ask in Task id order (a Task asked out of order
 * gets none). Only what the offer needs is checked here — the revision, the head digest, the
 * machine version and code hash, a snapshot record; the verifier trusts it only once the verified
 * chain has that digest at that revision, and the Task's spec comes from its verified events, not
 * from the checkpoint. A checkpoint that does not read as one is no offer (the Task is replayed
 * in full, as one without a checkpoint).
 */
export function offeredCheckpoints(
  store: EventStore,
  from?: string,
  to?: string,
): (taskId: string) => OfferedCheckpoint | undefined {
  const entries = checkpointEntries(store, from, to);
  let pending = entries.next();
  const code = machineCodeHash();
  return (taskId) => {
    while (!pending.done && pending.value.taskId < taskId) pending = entries.next();
    if (pending.done || pending.value.taskId !== taskId) return undefined;
    return offerOf(pending.value.value, code);
  };
}

/** The offer a stored checkpoint record makes, against the running machine's code hash. */
export function offerOf(value: unknown, code: string = machineCodeHash()): OfferedCheckpoint | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { revision, headDigest, machineVersion, codeHash, snapshot } = value as Record<string, unknown>;
  if (
    typeof revision !== 'number' ||
    !Number.isSafeInteger(revision) ||
    revision < 1 ||
    typeof headDigest !== 'string' ||
    !DIGEST.test(headDigest) ||
    typeof snapshot !== 'object' ||
    snapshot === null ||
    Array.isArray(snapshot)
  )
    return undefined;
  if (machineVersion !== TASK_MACHINE_VERSION || codeHash !== code) return 'other-code';
  return { revision, headDigest, snapshot: snapshot as Record<string, unknown> };
}
