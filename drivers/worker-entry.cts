/**
 * The file piscina loads in each thread. CommonJS on purpose: piscina tries `require()` on its
 * task module before `import()`, and with an ES module task file we saw Node 20.20 fail a pool's
 * first run with ERR_INTERNAL_ASSERTION ("Unexpected status of a module that is imported again
 * after being required") about once in fifty test runs. Here the real handler
 * (`workerData.handlerModule`, an ES module URL) is only ever loaded with `import()`, once per
 * thread, and the load starts as soon as the thread does.
 */
import threads = require('node:worker_threads');

type Handler = (task: unknown) => Promise<unknown>;

let loading: Promise<Handler> | undefined;

async function load(): Promise<Handler> {
  const data = threads.workerData as { handlerModule?: unknown } | null | undefined;
  const url = data?.handlerModule;
  if (typeof url !== 'string')
    throw new TypeError('workerData.handlerModule must be the URL of the driver worker module');
  const mod = (await import(url)) as { default?: unknown };
  if (typeof mod.default !== 'function') throw new TypeError(`${url} has no default export function`);
  return mod.default as Handler;
}

function handler(): Promise<Handler> {
  if (loading === undefined) {
    loading = load();
    // A failed load is retried by the next task instead of being cached.
    loading.catch(() => {
      loading = undefined;
    });
  }
  return loading;
}

function runTask(task: unknown): Promise<unknown> {
  return handler().then((run) => run(task));
}

if (!threads.isMainThread) handler().catch(() => undefined);

export = runTask;
