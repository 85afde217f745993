import type { EventStore, RawObject } from '../store/index.js';

export type { RawEvent } from '../store/index.js';

/** What a verifier reads besides the events of a stream. Reads may throw; the verifier turns that into findings. */
export interface VerifySource {
  /** The stored head record (unparsed), undefined when absent. */
  rawHead(taskId: string): unknown;
  /** The stored projection record (unparsed), undefined when absent. */
  rawProjection(taskId: string): unknown;
  /** The stored object (bytes, text or an older layout's decoded value), undefined when absent. */
  rawObject(digest: string): RawObject | undefined;
  /** Artifact bytes, undefined when absent. */
  blob(digest: string): Uint8Array | undefined;
  /**
   * Optional fast path of a digest-only check (`EventStore.storedDigest`): whether the stored
   * object or blob hashes to `digest`, without handing its bytes out; `'legacy'` sends the check
   * to `rawObject`. Sources without it are checked through `rawObject` and `blob`.
   */
  storedDigest?(digest: string): { in: 'object' | 'blob'; matches: boolean } | 'legacy' | undefined;
}

/** Reads of an EventStore for the verifier (values as stored, not yet parsed). */
export function lmdbVerifySource(store: EventStore): VerifySource {
  return {
    rawHead: (taskId) => store.rawHead(taskId),
    rawProjection: (taskId) => store.rawProjection(taskId),
    rawObject: (digest) => store.rawObject(digest),
    blob: (digest) => store.rawBlob(digest),
    storedDigest: (digest) => store.storedDigest(digest),
  };
}
