/**
 * Time as the pool sees it: restart-intensity windows, backoff waits and the worker watchdog all
 * read this, so tests drive them with a manual clock instead of sleeping.
 */
export interface Clock {
  /** Milliseconds on a monotonic-enough scale (only differences are used). */
  now(): number;
  /** Resolves `true` after `ms`, or `false` as soon as `signal` aborts (never rejects). */
  sleep(ms: number, signal?: AbortSignal): Promise<boolean>;
}

/** Wall-clock time and `setTimeout`. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<boolean>((resolve) => {
      if (signal?.aborted) return resolve(false);
      const onAbort = (): void => {
        clearTimeout(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve(true);
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};
