import type { Locator, Page, Request } from 'playwright-core';
import { digestOf } from '../../store/index.js';
import { withEvidence, type ReceiptWithEvidence } from '../../base/index.js';
import type { ParsedBrowserConfig } from './browser-config.js';
import { BrowserEffectError } from './browser-error.js';
import { identityOf, pageEvidence, readValue, refusalOf } from './browser-page.js';
import { BrowserReceipt } from './browser-receipt.js';

type Submitted = { kind: 'navigated' } | { kind: 'failed'; why: string } | { kind: 'timeout' };

/** What `submitForm` submits: the form page's URL and each form field's value. */
export interface FormSubmit {
  requestId: string;
  url: string;
  filled: Map<string, string>;
}

const notSubmitted = (
  requestId: string,
  code: 'browser_effect_unreachable' | 'browser_effect_form_invalid',
  why: string,
) => new BrowserEffectError(code, `not submitted: ${why}`, { requestId });

const noAnswer = (requestId: string, why: string) =>
  new BrowserEffectError('browser_effect_no_answer', `${requestId}: submitted, ${why}; the order may be done`, {
    requestId,
  });

/**
 * Each form field's value: the input's value under the key `config.form.fields` names, the
 * request id and (when configured) the input's digest; `browser_effect_invalid_input` for a value
 * that is no string, number or boolean.
 */
export function formValues(
  config: ParsedBrowserConfig,
  requestId: string,
  input: Record<string, unknown>,
): Map<string, string> {
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
}

/**
 * `perform` on a page: opens the form, fills it, submits it once and reads the confirmation into
 * a receipt with the page as evidence. Up to the click every failure proves nothing was submitted;
 * after it, only the site's refusal does (browserEffectAdapter says which codes mean what).
 */
export async function submitForm(
  config: ParsedBrowserConfig,
  page: Page,
  form: FormSubmit,
): Promise<ReceiptWithEvidence<BrowserReceipt>> {
  await openForm(config, page, form);
  const submit = await fillForm(config, page, form);
  const status = await submitOnce(config, page, submit, form.requestId);
  return readConfirmation(config, page, form.requestId, status);
}

/** Loads the form page; refuses one that answers an error status or states another identity. */
async function openForm(config: ParsedBrowserConfig, page: Page, { requestId, url }: FormSubmit): Promise<void> {
  let formResponse;
  try {
    formResponse = await page.goto(url, { waitUntil: 'load', timeout: config.timeoutMs });
  } catch (error) {
    throw notSubmitted(requestId, 'browser_effect_unreachable', `${url}: ${(error as Error).message.split('\n')[0]}`);
  }
  const formStatus = formResponse?.status() ?? null;
  if (formStatus === null || formStatus >= 400) {
    const siteCode = await refusalOf(config, page);
    throw new BrowserEffectError(
      'browser_effect_refused',
      `not submitted: the form page ${url} answered ${formStatus}${siteCode ? ` (${siteCode})` : ''}`,
      { requestId, siteCode },
    );
  }
  if (config.identity?.expected !== undefined) {
    const stated = await identityOf(config, page);
    if (stated !== config.identity.expected)
      throw new BrowserEffectError(
        'browser_effect_identity_changed',
        `not submitted: ${url} states the identity ${JSON.stringify(stated)}, not ${JSON.stringify(config.identity.expected)}`,
        { requestId },
      );
  }
}

/** Fills each field (exactly one control of its name) and returns the one submit control. */
async function fillForm(config: ParsedBrowserConfig, page: Page, { requestId, filled }: FormSubmit): Promise<Locator> {
  for (const [field, value] of filled) {
    const control = page.locator(`[name="${field.replace(/["\\]/g, '\\$&')}"]`);
    if ((await control.count()) !== 1)
      throw notSubmitted(
        requestId,
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
      requestId,
      'browser_effect_form_invalid',
      `the form page has ${await submit.count()} ${config.form.submit}`,
    );
  return submit;
}

/**
 * Clicks `submit` with the submit sent once, waits for the answer's page to load and resolves with
 * its status (null: none seen); `browser_effect_no_answer` when there is no answer to read.
 */
async function submitOnce(
  config: ParsedBrowserConfig,
  page: Page,
  submit: Locator,
  requestId: string,
): Promise<number | null> {
  const timeout = config.timeoutMs;
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
  try {
    await submit.click({ timeout, noWaitAfter: true });
  } catch (error) {
    // The click may have gone through before it failed: from here on nothing is proven.
    throw noAnswer(requestId, `the click failed (${(error as Error).message.split('\n')[0]})`);
  }
  const outcome = await submitted;
  if (outcome.kind === 'timeout') throw noAnswer(requestId, `no page within ${timeout} ms`);
  if (outcome.kind === 'failed') throw noAnswer(requestId, `the connection gave no answer (${outcome.why})`);
  try {
    await page.waitForLoadState('load', { timeout });
  } catch {
    throw noAnswer(requestId, `the answer did not finish loading within ${timeout} ms`);
  }
  return status;
}

/**
 * The answer's page as a receipt: the site's refusal (its code on an error status) is
 * `browser_effect_refused`; a page with no confirmation, or one lacking a field, is no answer.
 */
async function readConfirmation(
  config: ParsedBrowserConfig,
  page: Page,
  requestId: string,
  status: number | null,
): Promise<ReceiptWithEvidence<BrowserReceipt>> {
  const siteCode = await refusalOf(config, page);
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
    await page.locator(config.confirmation.selector).first().waitFor({ state: 'attached', timeout: config.timeoutMs });
  } catch {
    throw noAnswer(
      requestId,
      `status ${status}, and no confirmation (${config.confirmation.selector}) on ${page.url()}`,
    );
  }
  const fields: Record<string, string> = {};
  for (const [key, selector] of Object.entries(config.confirmation.fields)) {
    const value = await readValue(page, selector);
    if (value === undefined) throw noAnswer(requestId, `the confirmation has no ${key} (${selector})`);
    fields[key] = value;
  }
  const { kept, files } = await pageEvidence(config, page, requestId, true);
  const receipt = BrowserReceipt.parse({
    via: 'perform',
    requestId,
    url: page.url(),
    status,
    identity: await identityOf(config, page),
    fields,
    inputDigest: fields[config.confirmation.inputDigest] ?? null,
    ...kept,
  });
  return withEvidence(receipt, files);
}
