import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { digestOf } from '../../../store/index.js';
import { hostExpectation, W1_WEBAPP_FAULTS, W1_WEBAPP_TRAJECTORIES } from '../../../workloads/world-w1/index.js';
import { runBrowserBaselines, W1ResultRow } from '../../../workloads/world-w1/baselines/index.js';
import { runHostPath } from '../../../workloads/world-w1/host-path/sequence.js';
import { webappSurface } from '../../../workloads/world-w1/host-path/webapp-surface.js';
import { webappInput } from '../../../workloads/world-w1/host-path/spec.js';
import {
  readWebappFile,
  startWebapp,
  webappAdapters,
  type WebappAdapters,
  type WebappProcess,
} from '../../../workloads/world-w1/webapp/index.js';
import { CHROMIUM } from '../../support/chromium.js';
import { tempDir } from '../../support/temp.js';

// World W1's browser rows: the Host path and the plain browser clients (a) and (c) on every
// browser trajectory, against the real web app process in real headless Chromium (the comparison's
// adapters, launched once for the file: one browser for the answered submits, one for the submit
// whose confirmation is held past the short timeout; the SIGKILLed Host process has its own).
// Every order is counted from the web app's own file.

describe('World W1 in a browser: the web app order form under every fault', { timeout: 300_000 }, () => {
  let dir: string;
  let webapp: WebappProcess;
  let adapters: WebappAdapters;

  before(async () => {
    if (CHROMIUM.skip) return;
    dir = tempDir('ordivon-w1-browser-');
    webapp = await startWebapp({ db: join(dir, 'webapp.db'), identity: 'w1-webapp' });
    adapters = webappAdapters({ url: webapp.url, executablePath: CHROMIUM.need() });
  });
  after(async () => {
    await adapters?.close();
    await webapp?.stop();
  });

  /** The orders the web app's file holds with the digest of `input`, whatever their notes (read here, not by the harness). */
  const ordersOf = (input: unknown) => readWebappFile(webapp.db).filter((o) => o.inputDigest === digestOf(input));

  it(
    'the Host path orders once on every fault, recovering each lost confirmation through the history page, and refuses a changed site identity',
    { skip: CHROMIUM.skip },
    async () => {
      const surface = webappSurface(webapp, 'w1-webapp', adapters, CHROMIUM.need());
      const outcomes = await runHostPath(join(dir, 'host'), surface, W1_WEBAPP_TRAJECTORIES, () => undefined);
      const seen = outcomes.map((o, i) => {
        const orders = ordersOf(webappInput(`w1-${W1_WEBAPP_TRAJECTORIES[i]!.name}`));
        return {
          trajectory: o.trajectory,
          outcome:
            o.effect === 'recorded' ? 'succeeded' : o.intents === 0 ? `refused ${o.refusals.join(',')}` : o.state,
          performs: orders.length,
          // Each order was submitted under the Task's own request id (its note).
          underTask: orders.every((order) => order.note.startsWith(`${o.taskId}/`)),
          intents: o.intents,
          via: o.via,
          stale: o.staleRecords,
          operator: o.operatorRequests,
        };
      });
      const lost = new Set(['commit-then-drop', 'delay-past-timeout', 'provider-restart', 'host-sigkill']);
      const expected = W1_WEBAPP_TRAJECTORIES.map((t) => {
        const { outcome, performs } = hostExpectation(t);
        return {
          trajectory: t.name,
          outcome: outcome === 'refused' ? 'refused effect_endpoint_changed' : outcome,
          performs,
          underTask: true,
          intents: performs,
          via: performs === 0 ? null : lost.has(t.fault) ? 'lookup' : 'perform',
          stale: 0,
          operator: 0,
        };
      });
      assert.deepEqual(seen, expected, JSON.stringify(outcomes));
      // The item moved while the agent decided: the decision was stale, the rerun ordered on the new version.
      const moved = outcomes.find((o) => o.trajectory === 'webapp-orders-target-changed')!;
      assert.ok(moved.refusals.includes('context_stale'), JSON.stringify(moved));
    },
  );

  it(
    '(a) re-submits after every lost confirmation and orders twice; (c) finds its order by note, but not after a restart that forgot the note',
    { skip: CHROMIUM.skip },
    async () => {
      const rows = await runBrowserBaselines({ webapp, adapters }, W1_WEBAPP_FAULTS);
      for (const row of rows) W1ResultRow.parse(row);
      const twice = (variant: string, fault: string) =>
        fault === 'host-sigkill' ||
        (variant === 'a-retry' && ['commit-then-drop', 'delay-past-timeout', 'provider-restart'].includes(fault));
      assert.deepEqual(
        rows.map((r) => [r.variant, r.fault, r.outcome, r.performs, r.unsafeRedispatches, r.staleEvidenceUsed]),
        rows.map((r) => {
          const performs = twice(r.variant, r.fault) ? 2 : 1;
          const stale = r.fault === 'identity-changed' || r.fault === 'target-changed' ? 1 : 0;
          return [r.variant, r.fault, 'succeeded', performs, performs - 1, stale];
        }),
      );
      for (const row of rows)
        assert.equal(
          row.performs,
          ordersOf({ quantity: 1, reference: `${row.variant}.webapp-orders.${row.fault}` }).length,
          `${row.variant} ${row.fault}: read from the file`,
        );
    },
  );
});
