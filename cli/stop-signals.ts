/**
 * Calls `onSignal` at the first SIGTERM or SIGINT; later ones are ignored (the stop is under way).
 * Returns the function that stops listening: call it once the stop is over, not before.
 *
 * Listening with `process.on`, never `once`, and until the stop is over: a subprocess started with
 * execa's cleanup (signal-exit) leaves a listener of its own, which re-raises a signal when it finds
 * no other listener for it, and a `once` listener is already gone by the time it looks. The process
 * would then die of the signal halfway through its drain.
 */
export function onStopSignal(onSignal: (signal: NodeJS.Signals) => void): () => void {
  let heard = false;
  const listener = (signal: NodeJS.Signals): void => {
    if (heard) return;
    heard = true;
    onSignal(signal);
  };
  process.on('SIGTERM', listener);
  process.on('SIGINT', listener);
  return () => {
    process.off('SIGTERM', listener);
    process.off('SIGINT', listener);
  };
}
