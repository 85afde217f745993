import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { browserEffectAdapter, type BrowserEffectAdapter } from '../../../adapters/index.js';
import { webappBrowserConfig } from './browser-config.js';

/**
 * Chromium for the comparison's browser rows: `ORDIVON_CHROMIUM` when set (and only there), else
 * `/usr/bin/chromium`, else `chromium` on PATH. `missing` says where it looked.
 */
export function findChromium(env: NodeJS.ProcessEnv = process.env): { path: string } | { missing: string } {
  const given = env['ORDIVON_CHROMIUM'];
  const places = given
    ? [given]
    : [
        '/usr/bin/chromium',
        ...(env['PATH'] ?? '')
          .split(delimiter)
          .filter(Boolean)
          .map((dir) => join(dir, 'chromium')),
      ];
  for (const path of places) {
    try {
      accessSync(path, constants.X_OK);
      return { path };
    } catch {
      // not this one
    }
  }
  return {
    missing: given
      ? `ORDIVON_CHROMIUM=${given} is not an executable`
      : 'no /usr/bin/chromium and no `chromium` on PATH (apt-get install chromium, or set ORDIVON_CHROMIUM)',
  };
}

/** The comparison's browser adapters for one web app: one per timeout, sharing everything else. */
export interface WebappAdapters {
  /** The adapter whose every navigation and wait is bounded by `timeoutMs` (made on first ask, its Chromium on first use). */
  forTimeout(timeoutMs: number): BrowserEffectAdapter;
  /** Closes every adapter's Chromium. */
  close(): Promise<void>;
}

/**
 * The web app's browser adapters as every variant of the comparison uses them: the form filled
 * with the version the item page serves (`version: 'page'`: no variant carries the version it
 * observed into the form, as no HTTP variant sends `If-Match`), no identity expected, no copies of
 * the evidence outside the Host. A timeout has its own adapter, hence its own Chromium: the
 * comparison asks for two (the short one only for the answer a fault holds past it).
 */
export function webappAdapters(options: { url: string; executablePath: string }): WebappAdapters {
  const made = new Map<number, BrowserEffectAdapter>();
  return {
    forTimeout(timeoutMs) {
      let adapter = made.get(timeoutMs);
      if (!adapter) {
        adapter = browserEffectAdapter(webappBrowserConfig({ ...options, timeoutMs, version: 'page' }));
        made.set(timeoutMs, adapter);
      }
      return adapter;
    },
    async close() {
      await Promise.all([...made.values()].map((adapter) => adapter.close()));
      made.clear();
    },
  };
}
