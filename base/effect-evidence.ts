/*
 * How an Effect adapter hands evidence files over with a receipt (docs/effects.md). Here rather
 * than beside the EffectAdapter contract in frontier/: adapters take no value from frontier/
 * (which would load the whole Host), and `withEvidence` is a value.
 */

/** A file an adapter hands over with a receipt (a page's HTML, a screenshot): the Host keeps its bytes. */
export interface EffectEvidenceFile {
  /** Its name within the receipt (`page.html`); unique among the receipt's files. */
  readonly name: string;
  /** Its media type (`text/html`, `image/png`). */
  readonly mediaType: string;
  /** Its content, stored as a blob addressed by its sha256. */
  readonly bytes: Uint8Array;
}

/**
 * A receipt together with the evidence files it rests on (`withEvidence`), as `perform` may
 * resolve and `lookup`'s list may hold. The Host stores each file as a blob in the same commit as
 * the `effect-receipt` object, which names them (`evidence`: name, media type, digest, size).
 * A class rather than a `{ receipt, files }` shape: a plain value is always the receipt itself, so
 * an adapter whose receipts happen to have those two keys means what it meant before.
 */
export class ReceiptWithEvidence<R = unknown> {
  constructor(
    /** The receipt (JSON), kept as the `effect-receipt` object's `receipt`. */
    readonly receipt: R,
    /** The files it rests on. */
    readonly files: readonly EffectEvidenceFile[],
  ) {}
}

/** `receipt` with the evidence `files` the Host is to keep with it (see `ReceiptWithEvidence`). */
export function withEvidence<R>(receipt: R, files: readonly EffectEvidenceFile[]): ReceiptWithEvidence<R> {
  return new ReceiptWithEvidence(receipt, files);
}
