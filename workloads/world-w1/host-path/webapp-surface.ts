import {
  ordersWithInput,
  resetWebapp,
  setWebappFault,
  type WebappAdapters,
  type WebappProcess,
} from '../webapp/index.js';
import { ANSWER_WAIT_MS, W1_BROWSER_TIMEOUT_MS } from '../baselines/index.js';
import { until } from '../compare/wait.js';
import type { W1Trajectory } from './faults.js';
import { hostPathSpec, webappAction, webappEffect, webappInput } from './spec.js';
import type { W1HostSurface } from './surface.js';

const reference = (t: Pick<W1Trajectory, 'name'>) => `w1-${t.name}`;

/**
 * The web app behind the browser adapter (registered as `shop`): every trajectory orders one
 * widget through the form, each with an input of its own (its reference), and the web app's orders
 * are counted by that input's digest. The item is every trajectory's (`target-changed` moves it;
 * each Task observes it afresh). The confirmation a fault holds is the web app's
 * `delay-confirmation`; nothing releases it (the Host's timeout, a kill or a restart ends the wait).
 */
export function webappSurface(
  webapp: Pick<WebappProcess, 'url' | 'db'> & Partial<Pick<WebappProcess, 'kill' | 'restart'>>,
  identity: string,
  adapters: WebappAdapters,
  executablePath: string,
): W1HostSurface {
  const { url } = webapp;
  const surface: W1HostSurface = {
    args: { kind: 'webapp', url, db: webapp.db, identity, executablePath },
    timeoutOf: (t) => (t.fault === 'delay-past-timeout' ? W1_BROWSER_TIMEOUT_MS : ANSWER_WAIT_MS),
    adapters: (timeoutMs) => ({ shop: adapters.forTimeout(timeoutMs) }),
    agentFault(t) {
      if (t.fault === 'identity-changed')
        return { url: `${url}/control/identity`, body: { identity: `${reference(t)}.other-site` } };
      if (t.fault === 'target-changed') return { url: `${url}/control/items/widget/change`, body: {} };
      return undefined;
    },
    async prepare(t) {
      if (t.fault === 'commit-then-drop') await setWebappFault(url, { mode: 'commit-then-drop', times: 1 });
      if (t.fault === 'delay-past-timeout' || t.fault === 'host-sigkill' || t.fault === 'provider-restart')
        await setWebappFault(url, { mode: 'delay-confirmation', times: 1, delayMs: 600_000 });
      const effect = webappEffect(reference(t));
      return hostPathSpec(effect, t.name, { action: webappAction(effect), via: 'the web app' });
    },
    holding: (t) => until(`the order of ${t.name} committed`, async () => surface.performs(t).length >= 1),
    async restart() {
      // Killed: the held confirmation never leaves; the file keeps the order.
      await webapp.kill!();
      await webapp.restart!();
    },
    reset: () => resetWebapp(url, identity),
    performs: (t) =>
      ordersWithInput(webapp.db, webappInput(reference(t))).map((order) => ({ targetVersion: order.itemVersion })),
  };
  return surface;
}
