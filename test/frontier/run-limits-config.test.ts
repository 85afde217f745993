import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { HostError } from '../../kernel/errors.js';
import { createSupervisor } from '../../kernel/supervisor.js';
import { hostOptionsOf, parseHostConfig } from '../../frontier/harness-config.js';
import { openHost } from '../../host/host.js';
import { tempDir } from '../support/temp.js';

const ok = { driver: 'command', command: 'node' };

/** The code and path `run` throws with. */
function refusal(run: () => unknown): { code: string; path: string | undefined } {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof HostError, String(error));
    return { code: error.code, path: error.path };
  }
  assert.fail('accepted');
}

describe('concurrency limits in the configuration', () => {
  const cases: Array<[string, unknown, string]> = [
    ['runs 0', { harnesses: { a: ok }, concurrency: { runs: 0 } }, 'concurrency.runs'],
    ['runs not whole', { harnesses: { a: ok }, concurrency: { runs: 1.5 } }, 'concurrency.runs'],
    ['runs a string', { harnesses: { a: ok }, concurrency: { runs: '2' } }, 'concurrency.runs'],
    ['an unknown key under concurrency', { harnesses: { a: ok }, concurrency: { run: 2 } }, 'concurrency.run'],
    ['concurrency not an object', { harnesses: { a: ok }, concurrency: 2 }, 'concurrency'],
    ["a harness's maxRuns 0", { harnesses: { a: { ...ok, maxRuns: 0 } } }, 'harnesses.a.maxRuns'],
    ["a harness's maxRuns negative", { harnesses: { a: { ...ok, maxRuns: -1 } } }, 'harnesses.a.maxRuns'],
  ];
  for (const [title, config, path] of cases)
    it(`refuses ${title} invalid_config at ${path}`, () => {
      assert.deepEqual(
        refusal(() => parseHostConfig(config, {})),
        { code: 'invalid_config', path },
      );
    });

  it('takes concurrency.runs and maxRuns, and hands concurrency to openHost', () => {
    const config = parseHostConfig({ harnesses: { a: { ...ok, maxRuns: 1 } }, concurrency: { runs: 3 } }, {});
    assert.equal(config.harnesses['a']!.maxRuns, 1);
    assert.deepEqual(hostOptionsOf(config), { concurrency: { runs: 3 } });
  });

  it('openHost refuses a bad concurrency invalid_config at its field before anything is written', async () => {
    const state = join(tempDir(), 'state');
    await assert.rejects(
      openHost({ state, harnesses: { a: ok as never }, concurrency: { runs: 0 } }),
      (error: HostError) => error.code === 'invalid_config' && error.path === 'concurrency.runs',
    );
    await assert.rejects(
      openHost({ state, harnesses: { a: { ...ok, maxRuns: 2.5 } as never } }),
      (error: HostError) => error.code === 'invalid_config' && error.path === 'harnesses.a.maxRuns',
    );
    assert.equal(existsSync(state), false);
  });

  it('the supervisor refuses a bad concurrency option invalid_option at its field', () => {
    assert.deepEqual(
      refusal(() => createSupervisor({ state: tempDir(), concurrency: { harnesses: { a: 0 } } })),
      { code: 'invalid_option', path: 'concurrency.harnesses.a' },
    );
  });
});
