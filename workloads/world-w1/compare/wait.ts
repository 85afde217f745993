import { setProviderFaults, type ProviderProcess } from '../provider/index.js';

/**
 * Polls `check` until it holds; rejects naming `what` after `deadlineMs`. Used only to wait on
 * another process (the provider holding an answer), never to order this one's own steps.
 */
export async function until(what: string, check: () => Promise<boolean>, deadlineMs = 30_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`world-w1: timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Resolves once the provider holds `n` answers (it committed them and waits, as its `delay` switch says). */
export const held = (provider: Pick<ProviderProcess, 'url'>, n: number) =>
  until(`${n} held answer(s)`, async () => (await setProviderFaults(provider.url, {})).held >= n);
