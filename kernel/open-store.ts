import { EventStore, StoreError, storageFinding, type StoreAuthority } from '../store/index.js';
import { HostError, hostCodeOf, hostErrorOf } from './errors.js';
import { OBJECT_KINDS } from '../objects/index.js';

/**
 * Opens the supervisor's store on `root` (taking the state-root lock), as the `booting` step
 * does. A store failure becomes a HostError with its code and one finding; LMDB's and the file
 * system's own failures (a numeric errno or MDB code, `EIO`, `ENOSPC`, …) become `storage_failed`.
 * Anything else is a defect and is rethrown as it is.
 */
export function openStore(
  root: string,
  options: {
    purpose: string;
    streamWarnAt?: number | undefined;
    authority?: StoreAuthority | undefined;
    allowSharedRoot?: boolean | undefined;
  },
): EventStore {
  try {
    return EventStore.open({
      root,
      kinds: OBJECT_KINDS,
      purpose: options.purpose,
      ...(options.streamWarnAt ? { streamWarnAt: options.streamWarnAt } : {}),
      ...(options.authority ? { authority: options.authority } : {}),
      ...(options.allowSharedRoot !== undefined ? { allowSharedRoot: options.allowSharedRoot } : {}),
    });
  } catch (error) {
    if (error instanceof StoreError)
      throw hostErrorOf(error, {
        // A damaged page is the finding doctor names too (the page, its kind, the advice).
        findings: [storageFinding(error) ?? { code: hostCodeOf(error.code), message: error.message }],
      });
    // LMDB's and the file system's errors carry their own code (an errno or MDB number, `EIO`, …).
    if (!(error instanceof Error) || !('code' in error)) throw error;
    const { code } = error;
    if (typeof code !== 'number' && !(typeof code === 'string' && /^E[A-Z0-9]+$/.test(code))) throw error;
    const message = `cannot open the state root ${root} (its LMDB environment or files): ${error.message} (code ${String(code)})`;
    throw new HostError('storage_failed', message, { findings: [{ code: 'storage_failed', message }], cause: error });
  }
}
