/**
 * Waits for `promise` at most `ms`; resolves `undefined` on expiry. The timer is cleared as soon as
 * the race is decided, so a settled run leaves no pending timer keeping the event loop alive.
 */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, ms, undefined);
  });
  try {
    return await Promise.race([promise, expiry]);
  } finally {
    clearTimeout(timer);
  }
}
