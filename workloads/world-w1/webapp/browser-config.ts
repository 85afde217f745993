import type { BrowserEffectConfig } from '../../../adapters/index.js';

/** Where the web app is and how the browser adapter is to run against it. */
export interface WebappBrowserOptions {
  /** The web app's `http://127.0.0.1:PORT`. */
  url: string;
  /** The Chromium binary. */
  executablePath: string;
  /** Where screenshots and pages are kept. */
  evidenceDir: string;
  /** The identity a form page must state to be submitted; omitted, any. */
  expectedIdentity?: string;
  timeoutMs?: number;
}

/**
 * The browser adapter's config for this web app: the target is an item's name, the form its
 * `/items/:name` page; the input's `quantity` and `version` (the item version the caller
 * observed, which the server checks: another is 409 `webapp_item_changed`) fill the form, the
 * request id goes into the order note, and the history filtered by note is the lookup.
 */
export function webappBrowserConfig(options: WebappBrowserOptions): BrowserEffectConfig {
  const { url } = options;
  const read = {
    orderNumber: '.order-number',
    item: '.item',
    quantity: '.quantity',
    note: '.note',
    itemVersion: '.item-version',
    inputDigest: '.input-digest',
  };
  return {
    executablePath: options.executablePath,
    evidenceDir: options.evidenceDir,
    endpoint: url,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    form: {
      url: ({ target }) => `${url}/items/${encodeURIComponent(target)}`,
      fields: { quantity: 'quantity', version: 'version' },
      requestIdField: 'note',
      inputDigestField: 'inputDigest',
      submit: '#submit',
    },
    confirmation: { selector: '#confirmation', fields: read, inputDigest: 'inputDigest' },
    refusal: { selector: 'meta[name="error-code"]' },
    identity: {
      selector: 'meta[name="site-identity"]',
      ...(options.expectedIdentity === undefined ? {} : { expected: options.expectedIdentity }),
    },
    lookup: {
      url: (requestId) => `${url}/orders?note=${encodeURIComponent(requestId)}`,
      row: 'li.order',
      fields: read,
      inputDigest: 'inputDigest',
    },
    observe: {
      url: ({ target }) => `${url}/items/${encodeURIComponent(target)}`,
      version: 'meta[name="item-version"]',
      missingStatus: 404,
    },
    capabilities: { idempotency: 'none', lookupWindowMs: null },
  };
}
