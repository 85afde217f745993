import { mkdirSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { sha256Bytes } from '../../store/index.js';
import type { EffectEvidenceFile } from '../../base/index.js';
import { CHROMIUM_ARGS, type ParsedBrowserConfig } from './browser-config.js';
import { BrowserEffectError } from './browser-error.js';
import type { EvidenceFile } from './browser-receipt.js';

/** The element's `content` attribute (a meta tag), else its trimmed text; undefined when absent. */
export async function readValue(
  page: Page | ReturnType<Page['locator']>,
  selector: string,
): Promise<string | undefined> {
  const found = page.locator(selector).first();
  if ((await found.count()) === 0) return undefined;
  return found.evaluate((el) => el.getAttribute('content') ?? (el.textContent ?? '').trim());
}

/** The identity the page states (`config.identity`), null when none is configured or stated. */
export async function identityOf(config: ParsedBrowserConfig, page: Page): Promise<string | null> {
  return config.identity ? ((await readValue(page, config.identity.selector)) ?? null) : null;
}

/** The site's refusal code on the page (`config.refusal`), undefined when it has none. */
export async function refusalOf(config: ParsedBrowserConfig, page: Page): Promise<string | undefined> {
  return config.refusal ? readValue(page, config.refusal.selector) : undefined;
}

/** Loads `url` and resolves with its status (null: no response); a navigation that fails is `failed`'s error. */
export async function load(
  page: Page,
  url: string,
  timeout: number,
  failed: (why: string) => Error,
): Promise<number | null> {
  try {
    return (await page.goto(url, { waitUntil: 'load', timeout }))?.status() ?? null;
  } catch (error) {
    throw failed((error as Error).message.split('\n')[0]!);
  }
}

/**
 * Names `bytes` by their digest and, with `dir`, writes a copy as `<dir>/<hex>.<ext>` unless it is
 * there (same name, same bytes), through a rename.
 */
function keep(dir: string | undefined, bytes: Buffer, ext: string): EvidenceFile {
  const digest = sha256Bytes(bytes);
  if (dir === undefined) return { digest, bytes: bytes.length };
  const path = join(dir, `${digest.slice('sha256:'.length)}.${ext}`);
  if (!existsSync(path)) {
    mkdirSync(dir, { recursive: true });
    const part = `${path}.${process.pid}.part`;
    writeFileSync(part, bytes);
    renameSync(part, path);
  }
  return { digest, path, bytes: bytes.length };
}

/**
 * The page's HTML and (with `shot`) screenshot: named in the receipt (`kept`) and handed over
 * (`files`); `browser_effect_evidence_failed` if they cannot be read or copied.
 */
export async function pageEvidence(config: ParsedBrowserConfig, page: Page, requestId: string, shot: boolean) {
  try {
    const htmlBytes = Buffer.from(await page.content(), 'utf8');
    const shotBytes = shot ? await page.screenshot({ fullPage: true }) : undefined;
    const html = keep(config.evidenceDir, htmlBytes, 'html');
    const screenshot = shotBytes ? keep(config.evidenceDir, shotBytes, 'png') : undefined;
    const files: EffectEvidenceFile[] = [{ name: 'page.html', mediaType: 'text/html', bytes: htmlBytes }];
    if (shotBytes) files.push({ name: 'screenshot.png', mediaType: 'image/png', bytes: shotBytes });
    return { kept: { html, ...(screenshot ? { screenshot } : {}) }, files };
  } catch (error) {
    throw new BrowserEffectError('browser_effect_evidence_failed', `${requestId}: ${(error as Error).message}`, {
      requestId,
    });
  }
}

/** Pages of one Chromium, launched on first use; `close` stops it (the next page launches another). */
export interface BrowserPages {
  /** Runs `body` on a page of a fresh context (no cookies, no cache of another call), closed after. */
  withPage<T>(requestId: string | undefined, body: (page: Page) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * Chromium as `config` says (playwright-core, `chromium.launch`, which gives each browser a fresh
 * temporary profile). A launch that fails is `browser_effect_launch_failed`, and the next page tries again.
 */
export function browserPages(config: ParsedBrowserConfig): BrowserPages {
  let browser: Promise<Browser> | undefined;

  const launch = (requestId?: string): Promise<Browser> => {
    browser ??= import('playwright-core')
      .then(({ chromium }) =>
        chromium.launch({
          executablePath: config.executablePath,
          headless: true,
          args: [...(config.args ?? CHROMIUM_ARGS)],
        }),
      )
      .catch((error: unknown) => {
        browser = undefined;
        throw new BrowserEffectError(
          'browser_effect_launch_failed',
          `Chromium did not start: ${(error as Error).message}`,
          {
            requestId,
          },
        );
      });
    return browser;
  };

  return {
    async withPage(requestId, body) {
      const context = await (await launch(requestId)).newContext();
      try {
        const page = await context.newPage();
        page.setDefaultTimeout(config.timeoutMs);
        return await body(page);
      } finally {
        await context.close().catch(() => undefined);
      }
    },
    async close() {
      const running = browser;
      browser = undefined;
      if (running) await (await running.catch(() => undefined))?.close();
    },
  };
}
