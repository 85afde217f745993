import type { BrowserEffectConfig } from '../../../adapters/index.js';

/** Where the web app is and how the browser adapter is to run against it. */
export interface WebappBrowserOptions {
  /** The web app's `http://127.0.0.1:PORT`. */
  url: string;
  /** The Chromium binary. */
  executablePath: string;
  /** Where copies of the screenshots and pages go as well (the Host keeps them either way); omitted, none. */
  evidenceDir?: string;
  /** The identity a form page must state to be submitted; omitted, any. */
  expectedIdentity?: string;
  timeoutMs?: number;
  /**
   * Where the form's hidden `version` comes from: `input` (default), the input's `version`, the
   * item version the caller observed, which the server checks (another is 409
   * `webapp_item_changed`); `page`, the version the item page serves when the form is filled, as a
   * person submitting the page does (the site's check then never refuses, and a caller's guard
   * against a moved item is its own).
   */
  version?: 'input' | 'page';
}

/**
 * The browser adapter's config for this web app: the target is an item's name, the form its
 * `/items/:name` page; the input's `quantity` and (unless `version: 'page'`) its `version` fill the
 * form, the request id goes into the order note, and the history filtered by note is the lookup.
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
    ...(options.evidenceDir === undefined ? {} : { evidenceDir: options.evidenceDir }),
    endpoint: url,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    form: {
      url: ({ target }) => `${url}/items/${encodeURIComponent(target)}`,
      fields: options.version === 'page' ? { quantity: 'quantity' } : { quantity: 'quantity', version: 'version' },
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
