import type { Page } from 'playwright-core';
import { withEvidence, type ReceiptWithEvidence } from '../../base/index.js';
import type { EffectTarget } from '../../frontier/index.js';
import { parseBrowserConfig, type BrowserEffectConfig, type ParsedBrowserConfig } from './browser-config.js';
import { BrowserEffectError, browserNotPerformed } from './browser-error.js';
import { browserPages, identityOf, load, pageEvidence, readValue } from './browser-page.js';
import { BrowserReceipt, type BrowserEffectAdapter, type BrowserObservation } from './browser-receipt.js';
import { formValues, submitForm } from './browser-submit.js';

/**
 * A browser Effect adapter: `perform` opens the form page for the intent in a fresh browser
 * context, fills it from the input (the request id and the input digest into their fields),
 * submits it once and reads the confirmation into a receipt, handing the page's HTML and a
 * screenshot over with it as evidence files (`withEvidence`; copies in `evidenceDir` when it is
 * configured). Chromium is launched on first use (playwright-core,
 * `chromium.launch`, which gives each browser a fresh temporary profile).
 *
 * Failure semantics of `perform`: everything up to the click (the launch, the form page, the
 * identity check, the fields) proves nothing was submitted (`notPerformed`). After the click,
 * only a page carrying the site's refusal with a 4xx or 5xx status does (`browser_effect_refused`);
 * a dropped connection, a timeout, a page that is no confirmation, or evidence that cannot be
 * written is `browser_effect_no_answer` / `browser_effect_evidence_failed`: the submit may have
 * been done, and `lookup(requestId)` says whether.
 */
export function browserEffectAdapter(input: BrowserEffectConfig): BrowserEffectAdapter {
  const config = parseBrowserConfig(input);
  const pages = browserPages(config);
  const adapter: BrowserEffectAdapter = {
    endpoint: config.endpoint,
    async perform(requestId, input, intent) {
      // Checked before Chromium starts: an input the form cannot take launches nothing.
      const filled = formValues(config, requestId, input);
      const url = config.form.url(intent, input);
      return pages.withPage(requestId, (page) => submitForm(config, page, { requestId, url, filled }));
    },
    notPerformed: browserNotPerformed,
    receiptInputDigest(receipt) {
      const parsed = BrowserReceipt.safeParse(receipt);
      return parsed.success ? (parsed.data.inputDigest ?? undefined) : undefined;
    },
    close: () => pages.close(),
  };
  const { lookup, observe } = config;
  if (lookup)
    adapter.lookup = (requestId, intent) =>
      pages.withPage(requestId, (page) => lookUp(config, lookup, page, requestId, intent));
  if (observe)
    adapter.observe = (intent) => pages.withPage(undefined, (page) => observeOn(config, observe, page, intent));
  return adapter;
}

/** `lookup`: the site's page of submits under `requestId`, one receipt per row, each with the page as evidence. */
async function lookUp(
  config: ParsedBrowserConfig,
  lookup: NonNullable<ParsedBrowserConfig['lookup']>,
  page: Page,
  requestId: string,
  intent: EffectTarget,
): Promise<Array<ReceiptWithEvidence<BrowserReceipt>>> {
  const url = lookup.url(requestId, intent);
  const failed = (why: string) =>
    new BrowserEffectError('browser_effect_lookup_failed', `lookup ${requestId}: ${url}: ${why}`, { requestId });
  const status = await load(page, url, config.timeoutMs, failed);
  if (status !== 200) throw failed(`status ${status}`);
  const identity = await identityOf(config, page);
  const { kept, files } = await pageEvidence(config, page, requestId, false);
  const receipts: Array<ReceiptWithEvidence<BrowserReceipt>> = [];
  for (const row of await page.locator(lookup.row).all()) {
    const fields: Record<string, string> = {};
    for (const [key, selector] of Object.entries(lookup.fields)) {
      const value = await readValue(row, selector);
      if (value === undefined) throw failed(`a row has no ${key} (${selector})`);
      fields[key] = value;
    }
    const receipt = BrowserReceipt.parse({
      via: 'lookup',
      requestId,
      url: page.url(),
      status,
      identity,
      fields,
      inputDigest: fields[lookup.inputDigest] ?? null,
      ...kept,
    });
    // Every row rests on the one page: each receipt names the same file (one blob).
    receipts.push(withEvidence(receipt, files));
  }
  return receipts;
}

/** `observe`: the target's page, its version (null: `missingStatus`, no such target) and the site's identity. */
async function observeOn(
  config: ParsedBrowserConfig,
  observe: NonNullable<ParsedBrowserConfig['observe']>,
  page: Page,
  intent: EffectTarget,
): Promise<BrowserObservation> {
  const url = observe.url(intent);
  const failed = (why: string) => new BrowserEffectError('browser_effect_observe_failed', `observe ${url}: ${why}`);
  const status = await load(page, url, config.timeoutMs, failed);
  const endpointIdentity = (await identityOf(config, page)) ?? new URL(url).origin;
  let targetVersion: string | null = null;
  if (status !== observe.missingStatus) {
    if (status !== 200) throw failed(`status ${status}`);
    const version = await readValue(page, observe.version);
    if (version === undefined) throw failed(`no version (${observe.version})`);
    targetVersion = version;
  }
  return {
    endpointIdentity,
    targetVersion,
    capabilities: {
      idempotency: config.capabilities.idempotency,
      lookup: config.lookup !== undefined,
      lookupWindowMs: config.capabilities.lookupWindowMs,
    },
  };
}
