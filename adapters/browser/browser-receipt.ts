import { z } from 'zod';
import type { ReceiptWithEvidence } from '../../base/index.js';
import type { EffectTarget } from '../../frontier/index.js';

// What the browser adapter answers: its receipts and the Host-facing interface (browser-adapter.ts builds it).

/** A file of evidence, named by its digest; `path`: its copy in `evidenceDir`, when one is configured. */
export const EvidenceFile = z.strictObject({
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  path: z.string().optional(),
  bytes: z.number().int().nonnegative(),
});
export type EvidenceFile = z.infer<typeof EvidenceFile>;

/**
 * The receipt `perform` resolves with (`via: perform`: the confirmation page, its HTML and
 * screenshot handed over as evidence files `page.html` and `screenshot.png`) and each receipt
 * `lookup` finds (`via: lookup`: a row of the lookup page, that page's HTML handed over as
 * `page.html`). `inputDigest` is the site's record of the input digest, read from its page.
 */
export const BrowserReceipt = z.strictObject({
  via: z.enum(['perform', 'lookup']),
  requestId: z.string(),
  /** The page the receipt was read from. */
  url: z.string(),
  status: z.number().int().nullable(),
  /** The site's identity as that page stated it (`identity.selector`), null when not configured. */
  identity: z.string().nullable(),
  fields: z.record(z.string(), z.string()),
  inputDigest: z.string().nullable(),
  /** The page's final HTML (the DOM as serialised after load). */
  html: EvidenceFile,
  /** The page's screenshot (PNG, full page); `perform` only. */
  screenshot: EvidenceFile.optional(),
});
export type BrowserReceipt = z.infer<typeof BrowserReceipt>;

/** What `observe` reads (the shape of the Host's `EffectObservation`). */
export interface BrowserObservation {
  endpointIdentity: string;
  targetVersion: string | null;
  capabilities: { idempotency: 'key' | 'provider-id' | 'none'; lookup: boolean; lookupWindowMs: number | null };
}

/** The Host's `EffectAdapter` over one site in Chromium, plus `close()` for the browser it launched. */
export interface BrowserEffectAdapter {
  readonly endpoint: string;
  /** The receipt with its evidence files (the Host keeps them as blobs with the receipt). */
  perform(
    requestId: string,
    input: Record<string, unknown>,
    intent: EffectTarget,
  ): Promise<ReceiptWithEvidence<BrowserReceipt>>;
  /** Absent without `config.lookup`: the site cannot say what happened, and the Host asks an operator. */
  lookup?(requestId: string, intent: EffectTarget): Promise<Array<ReceiptWithEvidence<BrowserReceipt>> | null>;
  notPerformed(error: unknown): boolean;
  /** Absent without `config.observe`. */
  observe?(intent: EffectTarget): Promise<BrowserObservation>;
  receiptInputDigest(receipt: unknown): string | undefined;
  /** Closes the browser (a no-op if none was launched); a later call launches a new one. */
  close(): Promise<void>;
}
