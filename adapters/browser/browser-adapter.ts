import { mkdirSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page, Request } from 'playwright-core';
import { digestOf, sha256Bytes } from '../../store/index.js';
import { withEvidence, type EffectEvidenceFile, type ReceiptWithEvidence } from '../../base/index.js';
import type { EffectTarget } from '../../frontier/index.js';
import { CHROMIUM_ARGS, parseBrowserConfig, type BrowserEffectConfig } from './browser-config.js';
import { BrowserEffectError, browserNotPerformed } from './browser-error.js';
import { BrowserReceipt, type BrowserEffectAdapter, type EvidenceFile } from './browser-receipt.js';

/** The element's `content` attribute (a meta tag), else its trimmed text; undefined when absent. */
async function readValue(page: Page | ReturnType<Page['locator']>, selector: string): Promise<string | undefined> {
  const found = page.locator(selector).first();
  if ((await found.count()) === 0) return undefined;
  return found.evaluate((el) => el.getAttribute('content') ?? (el.textContent ?? '').trim());
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

type Submitted = { kind: 'navigated' } | { kind: 'failed'; why: string } | { kind: 'timeout' };

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
  const timeout = config.timeoutMs;
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

  /** Runs `body` on a page of a fresh context (no cookies, no cache of another call), closed after. */
  const withPage = async <T>(requestId: string | undefined, body: (page: Page) => Promise<T>): Promise<T> => {
    const context = await (await launch(requestId)).newContext();
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(timeout);
      return await body(page);
    } finally {
      await context.close().catch(() => undefined);
    }
  };

  const identityOf = async (page: Page) =>
    config.identity ? ((await readValue(page, config.identity.selector)) ?? null) : null;
  const refusalOf = async (page: Page) => (config.refusal ? readValue(page, config.refusal.selector) : undefined);

  /**
   * The page's HTML and (with `shot`) screenshot: named in the receipt (`kept`) and handed over
   * (`files`); `browser_effect_evidence_failed` if they cannot be read or copied.
   */
  const evidence = async (page: Page, requestId: string, shot: boolean) => {
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
  };

  const values = (requestId: string, input: Record<string, unknown>): Map<string, string> => {
    const filled = new Map<string, string>();
    for (const [field, key] of Object.entries(config.form.fields)) {
      const value = input[key];
      if (!['string', 'number', 'boolean'].includes(typeof value))
        throw new BrowserEffectError(
          'browser_effect_invalid_input',
          `not submitted: the input's ${key} (for the form field ${field}) is not a string, number or boolean`,
          { path: key, requestId },
        );
      filled.set(field, String(value));
    }
    filled.set(config.form.requestIdField, requestId);
    if (config.form.inputDigestField) filled.set(config.form.inputDigestField, digestOf(input));
    return filled;
  };

  const perform = async (requestId: string, input: Record<string, unknown>, intent: EffectTarget) => {
    const filled = values(requestId, input);
    const url = config.form.url(intent, input);
    return withPage(requestId, async (page) => {
      const notSubmitted = (code: 'browser_effect_unreachable' | 'browser_effect_form_invalid', why: string) =>
        new BrowserEffectError(code, `not submitted: ${why}`, { requestId });
      let formResponse;
      try {
        formResponse = await page.goto(url, { waitUntil: 'load', timeout });
      } catch (error) {
        throw notSubmitted('browser_effect_unreachable', `${url}: ${(error as Error).message.split('\n')[0]}`);
      }
      const formStatus = formResponse?.status() ?? null;
      if (formStatus === null || formStatus >= 400) {
        const siteCode = await refusalOf(page);
        throw new BrowserEffectError(
          'browser_effect_refused',
          `not submitted: the form page ${url} answered ${formStatus}${siteCode ? ` (${siteCode})` : ''}`,
          { requestId, siteCode },
        );
      }
      if (config.identity?.expected !== undefined) {
        const stated = await identityOf(page);
        if (stated !== config.identity.expected)
          throw new BrowserEffectError(
            'browser_effect_identity_changed',
            `not submitted: ${url} states the identity ${JSON.stringify(stated)}, not ${JSON.stringify(config.identity.expected)}`,
            { requestId },
          );
      }
      for (const [field, value] of filled) {
        const control = page.locator(`[name="${field.replace(/["\\]/g, '\\$&')}"]`);
        if ((await control.count()) !== 1)
          throw notSubmitted(
            'browser_effect_form_invalid',
            `the form page has ${await control.count()} fields named ${field}`,
          );
        // A hidden field takes no typing; every other one is filled as a person would.
        if ((await control.getAttribute('type')) === 'hidden')
          await control.evaluate((el, v) => ((el as unknown as { value: string }).value = v), value);
        else await control.fill(value);
      }
      const submit = page.locator(config.form.submit);
      if ((await submit.count()) !== 1)
        throw notSubmitted(
          'browser_effect_form_invalid',
          `the form page has ${await submit.count()} ${config.form.submit}`,
        );

      // Registered before the click: the main frame's next document, or its request failing.
      const main = page.mainFrame();
      const isSubmit = (request: Request) => request.isNavigationRequest() && request.frame() === main;
      // The submit leaves once, from here: Chromium resends a request whose idle (preconnected or
      // kept-alive) socket closed without an answer, and a resent non-idempotent submit is a second
      // order nobody asked for (test/adapters/browser.test.ts, commit-then-drop, saw exactly that).
      // route.fetch with no retries sends it once; a lost answer aborts the browser's request.
      await page.route('**/*', async (route) => {
        const request = route.request();
        if (!isSubmit(request) || request.method() === 'GET') return route.continue();
        try {
          await route.fulfill({ response: await route.fetch({ maxRetries: 0, timeout }) });
        } catch {
          await route.abort('connectionfailed').catch(() => undefined);
        }
      });
      let status: number | null = null;
      page.on('response', (response) => {
        if (isSubmit(response.request())) status = response.status();
      });
      const submitted = new Promise<Submitted>((resolve) => {
        const timer = setTimeout(() => resolve({ kind: 'timeout' }), timeout);
        const done = (outcome: Submitted) => {
          clearTimeout(timer);
          resolve(outcome);
        };
        page.on('requestfailed', (request) => {
          if (isSubmit(request)) done({ kind: 'failed', why: request.failure()?.errorText ?? 'the request failed' });
        });
        page.on('framenavigated', (frame) => {
          if (frame === main && !frame.url().startsWith('chrome-error:')) done({ kind: 'navigated' });
        });
      });
      const noAnswer = (why: string) =>
        new BrowserEffectError('browser_effect_no_answer', `${requestId}: submitted, ${why}; the order may be done`, {
          requestId,
        });
      try {
        await submit.click({ timeout, noWaitAfter: true });
      } catch (error) {
        // The click may have gone through before it failed: from here on nothing is proven.
        throw noAnswer(`the click failed (${(error as Error).message.split('\n')[0]})`);
      }
      const outcome = await submitted;
      if (outcome.kind === 'timeout') throw noAnswer(`no page within ${timeout} ms`);
      if (outcome.kind === 'failed') throw noAnswer(`the connection gave no answer (${outcome.why})`);
      try {
        await page.waitForLoadState('load', { timeout });
      } catch {
        throw noAnswer(`the answer did not finish loading within ${timeout} ms`);
      }
      const siteCode = await refusalOf(page);
      if (siteCode !== undefined && status !== null && status >= 400)
        throw new BrowserEffectError(
          'browser_effect_refused',
          `${requestId}: the site refused it (${status} ${siteCode})`,
          {
            requestId,
            siteCode,
          },
        );
      try {
        await page.locator(config.confirmation.selector).first().waitFor({ state: 'attached', timeout });
      } catch {
        throw noAnswer(`status ${status}, and no confirmation (${config.confirmation.selector}) on ${page.url()}`);
      }
      const fields: Record<string, string> = {};
      for (const [key, selector] of Object.entries(config.confirmation.fields)) {
        const value = await readValue(page, selector);
        if (value === undefined) throw noAnswer(`the confirmation has no ${key} (${selector})`);
        fields[key] = value;
      }
      const { kept, files } = await evidence(page, requestId, true);
      const receipt = BrowserReceipt.parse({
        via: 'perform',
        requestId,
        url: page.url(),
        status,
        identity: await identityOf(page),
        fields,
        inputDigest: fields[config.confirmation.inputDigest] ?? null,
        ...kept,
      });
      return withEvidence(receipt, files);
    });
  };

  const adapter: BrowserEffectAdapter = {
    endpoint: config.endpoint,
    perform,
    notPerformed: browserNotPerformed,
    receiptInputDigest(receipt) {
      const parsed = BrowserReceipt.safeParse(receipt);
      return parsed.success ? (parsed.data.inputDigest ?? undefined) : undefined;
    },
    async close() {
      const running = browser;
      browser = undefined;
      if (running) await (await running.catch(() => undefined))?.close();
    },
  };

  /** Loads `url` and resolves with its status (null: no response); a navigation that fails is `failed`'s error. */
  const load = async (page: Page, url: string, failed: (why: string) => Error): Promise<number | null> => {
    try {
      return (await page.goto(url, { waitUntil: 'load', timeout }))?.status() ?? null;
    } catch (error) {
      throw failed((error as Error).message.split('\n')[0]!);
    }
  };

  const lookup = config.lookup;
  if (lookup)
    adapter.lookup = (requestId, intent) =>
      withPage(requestId, async (page) => {
        const url = lookup.url(requestId, intent);
        const failed = (why: string) =>
          new BrowserEffectError('browser_effect_lookup_failed', `lookup ${requestId}: ${url}: ${why}`, { requestId });
        const status = await load(page, url, failed);
        if (status !== 200) throw failed(`status ${status}`);
        const identity = await identityOf(page);
        const { kept, files } = await evidence(page, requestId, false);
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
      });

  const observe = config.observe;
  if (observe)
    adapter.observe = (intent) =>
      withPage(undefined, async (page) => {
        const url = observe.url(intent);
        const failed = (why: string) =>
          new BrowserEffectError('browser_effect_observe_failed', `observe ${url}: ${why}`);
        const status = await load(page, url, failed);
        const endpointIdentity = (await identityOf(page)) ?? new URL(url).origin;
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
            lookup: lookup !== undefined,
            lookupWindowMs: config.capabilities.lookupWindowMs,
          },
        };
      });

  return adapter;
}
