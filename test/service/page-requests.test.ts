import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import { manualClock } from '../../kernel/clock.js';
import { createSupervisor } from '../../kernel/supervisor.js';
import { findExecutable, optionalPart } from '../support/optional-part.js';
import { HOUR, operatorRequest, serveInProcess } from '../support/decision-requests.js';
import { SPEC } from '../support/tasks.js';
import { tempDir } from '../support/temp.js';

// As page.test.ts: Debian's chromium through playwright-core; skipped without it, failed under CI=true.
const CHROMIUM = optionalPart(
  'Chromium',
  findExecutable(process.env.ORDIVON_CHROMIUM ? [process.env.ORDIVON_CHROMIUM] : ['/usr/bin/chromium', 'chromium']),
  'looked for /usr/bin/chromium and `chromium` on PATH (or ORDIVON_CHROMIUM); install it',
);

describe('DecisionRequests on the service page in headless Chromium', { timeout: 90_000 }, () => {
  it(
    'shows each request with a button per answer; a click answers it, and a refused click shows its code and detail',
    {
      skip: CHROMIUM.skip,
    },
    async () => {
      const executablePath = CHROMIUM.need();
      const dir = tempDir();
      const clock = manualClock();
      const sup = createSupervisor({ state: join(dir, 'state'), clock });
      await sup.start();
      const service = await serveInProcess(sup);
      let context: Awaited<ReturnType<typeof chromium.launchPersistentContext>> | undefined;
      try {
        context = await chromium.launchPersistentContext(join(dir, 'profile'), {
          executablePath,
          headless: true,
          args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
        });
        await sup.createTask({ ...SPEC, taskId: 'page-r' });
        await sup.openRequest('page-r', operatorRequest('ship-it'));
        await sup.openRequest('page-r', operatorRequest('race', HOUR));
        const page = context.pages()[0] ?? (await context.newPage());
        await page.goto(service.loginUrl()!);
        await page.goto(`${service.url}/#page-r`);
        const row = (id: string) => page.locator(`tr.request[data-request="${id}"]`);
        await row('ship-it').locator('button[data-answer="hold"]').waitFor();
        assert.deepEqual(await row('ship-it').locator('button').allTextContents(), ['ship', 'hold']);
        const text = (await row('race').textContent()) ?? '';
        for (const field of ['release-manager', 'ship release 4.2 to the staging fleet', '2026-01-01T01:00:00.000Z'])
          assert.ok(text.includes(field), `the row shows ${field}: ${text}`);

        await row('ship-it').locator('button[data-answer="hold"]').click();
        await page.locator('tr.request[data-request="ship-it"][data-status="answered"]').waitFor();
        assert.match((await row('ship-it').locator('td.outcome').textContent()) ?? '', /answered hold by page/);
        assert.equal(await row('ship-it').locator('button').count(), 0, 'an answered request offers no buttons');
        assert.equal(sup.getTask('page-r')!.context.requests['ship-it']!.answer, 'hold');

        // The deadline passes with no timer fired: the page still offers the answer, the Host refuses it.
        clock.advance(HOUR, { fire: false });
        await row('race').locator('button[data-answer="ship"]').click();
        await page.locator('#answer-result[data-code="decision_expired"]').waitFor();
        assert.match(
          (await page.locator('#answer-result').textContent()) ?? '',
          /race ship: decision_expired: expired at/,
        );
        await page.locator('tr.request[data-request="race"][data-status="expired"]').waitFor();
        assert.match(
          (await row('race').locator('td.outcome').textContent()) ?? '',
          /refused r\d+ ship by page: decision_expired/,
        );
      } finally {
        await context?.close();
        await service.close();
        await sup.stop();
      }
    },
  );
});
