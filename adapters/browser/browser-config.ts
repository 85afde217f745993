import { z } from 'zod';
import { zodIssue } from '../../base/index.js';
import type { EffectTarget } from '../../frontier/index.js';
import { BrowserEffectError } from './browser-error.js';

/**
 * Chromium's flags: headless, no sandbox (containers), and nothing that reaches the network on its
 * own (QUIC, background fetches, component updates, sync), so every request is the adapter's.
 */
export const CHROMIUM_ARGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const fn = <F extends (...args: never[]) => unknown>(what: string) =>
  z.custom<F>((value) => typeof value === 'function', `${what}: a function`);
const Selector = z.string().min(1);
/** Receipt key → CSS selector; the value read is the element's `content` attribute, else its trimmed text. */
const Reads = z.record(z.string().min(1), Selector);

/**
 * What the adapter needs to know of one site, and nothing of any other: where the form for a
 * target is, which of its fields come from the input, how a confirmation and a refusal look, and
 * (optionally) where past submits can be read back and how a target is observed.
 */
export const BrowserEffectConfig = z.strictObject({
  /** The Chromium binary (`/usr/bin/chromium`). */
  executablePath: z.string().min(1),
  /**
   * Optional: where copies of the evidence files go as well, named by their sha256 (`<hex>.png`,
   * `<hex>.html`; created if absent). The Host keeps the files either way (`withEvidence`).
   */
  evidenceDir: z.string().min(1).optional(),
  /** The binding identity recorded in each intent (the site's origin). */
  endpoint: z.string().min(1),
  /** Bounds each navigation and each wait, the confirmation's included (default 10000). */
  timeoutMs: z.number().int().positive().default(10_000),
  /** Chromium's flags (default `CHROMIUM_ARGS`). */
  args: z.array(z.string()).optional(),
  form: z.strictObject({
    /** The form page's URL for the intent. */
    url: fn<(intent: EffectTarget, input: Record<string, unknown>) => string>('form.url'),
    /** Form field name → the input key whose value fills it (a string, number or boolean). */
    fields: z.record(z.string().min(1), z.string().min(1)),
    /** The form field that carries the Effect's request id (what `lookup` finds a submit by). */
    requestIdField: z.string().min(1),
    /** The form field that carries `digestOf(input)`, for the site to keep with what it does. */
    inputDigestField: z.string().min(1).optional(),
    /** The control that submits the form. */
    submit: Selector,
  }),
  confirmation: z.strictObject({
    /** An element only a confirmation page has. */
    selector: Selector,
    /** What the receipt reads from it. */
    fields: Reads,
    /** Which of `fields` is the site's record of the input digest. */
    inputDigest: z.string().min(1),
  }),
  /**
   * An element naming the site's refusal code: a page with it and a 4xx or 5xx status is the
   * site's statement that nothing was done (`browser_effect_refused`, `notPerformed`). Without it,
   * an error page after the submit is no answer.
   */
  refusal: z.strictObject({ selector: Selector }).optional(),
  /** An element naming the site's identity; with `expected`, a form page stating another is not submitted. */
  identity: z.strictObject({ selector: Selector, expected: z.string().min(1).optional() }).optional(),
  /** Where past submits are read back: the page listing those under a request id, one element per submit. */
  lookup: z
    .strictObject({
      url: fn<(requestId: string, intent: EffectTarget) => string>('lookup.url'),
      row: Selector,
      /** Read inside each row. */
      fields: Reads,
      inputDigest: z.string().min(1),
    })
    .optional(),
  /** How a target is observed: its page, and the element naming its version; `missingStatus`: no such target. */
  observe: z
    .strictObject({
      url: fn<(intent: EffectTarget) => string>('observe.url'),
      version: Selector,
      missingStatus: z.number().int().default(404),
    })
    .optional(),
  /** What the site declares of itself (a browser form has no idempotency key of its own). */
  capabilities: z
    .strictObject({
      idempotency: z.enum(['key', 'provider-id', 'none']).default('none'),
      lookupWindowMs: z.number().int().positive().nullable().default(null),
    })
    .default({ idempotency: 'none', lookupWindowMs: null }),
});
export type BrowserEffectConfig = z.input<typeof BrowserEffectConfig>;
export type ParsedBrowserConfig = z.output<typeof BrowserEffectConfig>;

/** The config parsed; `browser_effect_invalid_config` naming the field otherwise. */
export function parseBrowserConfig(config: BrowserEffectConfig): ParsedBrowserConfig {
  const parsed = BrowserEffectConfig.safeParse(config);
  if (parsed.success) return parsed.data;
  const issue = zodIssue('browser_effect_invalid_config', parsed.error);
  throw new BrowserEffectError(issue.code, issue.message, { path: issue.path });
}
