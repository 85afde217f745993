import {
  changeWebappItem,
  ordersWithInput,
  resetWebapp,
  setWebappFault,
  setWebappIdentity,
  type WebappAdapters,
  type WebappProcess,
} from '../webapp/index.js';
import { ANSWER_WAIT_MS, runPlainClient, type BaselineVariant, type PlainClient } from './client-loop.js';
import { resultRow, type W1Fault, type W1ResultRow } from './result-row.js';

/**
 * The plain browser clients of the web app (no Host): (a) re-submits the form on error, (c) looks
 * its note up in the history page and re-submits when it is not there. Both submit through the
 * same browser adapter the Host uses (its `perform` and `lookup`), so they differ from the Host
 * path only in what they do with a lost confirmation.
 */
export const BROWSER_BASELINE_VARIANTS = ['a-retry', 'c-lookup'] as const satisfies readonly BaselineVariant[];
export type BrowserBaselineVariant = (typeof BROWSER_BASELINE_VARIANTS)[number];

/** The variants that do not apply to a form, and why (the table prints them as n/a). */
export const BROWSER_NOT_APPLICABLE = {
  'b-key': 'a form has no idempotency key: re-submitting it under the same note is (a)',
} as const;

/** The timeout of the submit whose confirmation the fault holds (`delay-past-timeout`, `host-sigkill`). */
export const W1_BROWSER_TIMEOUT_MS = 4000;

export interface BrowserBaselineOptions {
  /** A running web app; `provider-restart` restarts it, and every trajectory leaves its switches off. */
  webapp: WebappProcess;
  /** The browser adapters for it (one Chromium per timeout). */
  adapters: WebappAdapters;
  /** The timeout of the submit whose confirmation the fault holds (default `W1_BROWSER_TIMEOUT_MS`). */
  timeoutMs?: number;
  /** How many submits a client makes at most (default 3). */
  maxSends?: number;
}

const AT = { operation: 'order', target: 'widget' };

/**
 * One browser trajectory of a plain client: it looks at the item and the site once, the fault
 * strikes, it submits the form (`quantity` 1, the note its key) and recovers the way its variant
 * does (runPlainClient). The row's performs are the orders in the web app's file carrying the
 * trajectory's input digest, whatever notes they were submitted under.
 */
export async function runBrowserBaseline(
  options: BrowserBaselineOptions,
  variant: BrowserBaselineVariant,
  fault: W1Fault,
): Promise<W1ResultRow> {
  const { webapp, adapters } = options;
  const reference = `${variant}.webapp-orders.${fault}`;
  const input = { quantity: 1, reference };
  const answered = adapters.forTimeout(ANSWER_WAIT_MS);
  const held = adapters.forTimeout(options.timeoutMs ?? W1_BROWSER_TIMEOUT_MS);
  const seen = await answered.observe!(AT);

  // What changes between the client's look and its submit.
  if (fault === 'identity-changed') await setWebappIdentity(webapp.url, `${reference}.other-site`);
  if (fault === 'target-changed') await changeWebappItem(webapp.url, AT.target);
  // What loses the first submit's confirmation after its commit.
  if (fault === 'commit-then-drop' || fault === 'provider-restart')
    await setWebappFault(webapp.url, { mode: 'commit-then-drop', times: 1 });
  if (fault === 'delay-past-timeout' || fault === 'host-sigkill')
    await setWebappFault(webapp.url, { mode: 'delay-confirmation', times: 1, delayMs: 600_000 });

  const client: PlainClient = {
    send: (note, isHeld) =>
      (isHeld ? held : answered).perform(note, input, AT).then(
        () => 'done' as const,
        (error: unknown) => (answered.notPerformed(error) ? ('refused' as const) : ('lost' as const)),
      ),
    lookUp: (note) =>
      answered.lookup!(note, AT).then(
        (found) => (found === null ? 'unknown' : found.length > 0 ? 'found' : 'absent'),
        () => 'unknown' as const,
      ),
    async incident() {
      if (fault === 'provider-restart') await webapp.restart();
    },
    // Nothing on a form deduplicates: the web app orders whatever is submitted.
    deduplicates: () => false,
  };
  const { started, ...run } = await runPlainClient(variant, fault, reference, client, options.maxSends ?? 3);

  await resetWebapp(webapp.url, seen.endpointIdentity);
  const performs = ordersWithInput(webapp.db, input).length;
  return resultRow(
    {
      variant,
      operation: 'webapp-orders',
      fault,
      ...run,
      operatorInterventions: 0,
      elapsedMs: Date.now() - started,
    },
    performs,
  );
}

/** Every browser baseline trajectory (each variant × fault) in turn, one row each. */
export async function runBrowserBaselines(
  options: BrowserBaselineOptions,
  faults: readonly W1Fault[],
  variants: readonly BrowserBaselineVariant[] = BROWSER_BASELINE_VARIANTS,
): Promise<W1ResultRow[]> {
  const rows: W1ResultRow[] = [];
  for (const variant of variants)
    for (const fault of faults) rows.push(await runBrowserBaseline(options, variant, fault));
  return rows;
}
