import type { DispatchInputIn, Runtime } from '../../runtime/index.js';

/**
 * The Runtime as the Host's frontier work sees it, but a dispatch `lose` picks is performed and
 * its response then lost (the call rejects after the job started): the demo's and the tests' way
 * to make a dispatch `unknown` for the Host to reconcile by its clientRequestId. Everything else
 * is the Runtime's own.
 */
export function losingResponses(runtime: Runtime, lose: (input: DispatchInputIn) => boolean): Runtime {
  const dispatch: Runtime['dispatch'] = async (input) => {
    const result = await runtime.dispatch(input);
    if (lose(input)) throw new Error(`the response to ${input.clientRequestId} was lost on purpose`);
    return result;
  };
  return new Proxy(runtime, {
    get(target, key) {
      if (key === 'dispatch') return dispatch;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
