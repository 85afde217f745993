import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { HostError } from '../../actors/errors.js';
import { parseHostConfig } from '../../actors/harness-config.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** Every ```json block of a page that has a `harnesses` key: the configuration examples. */
function configExamples(page: string): unknown[] {
  const text = readFileSync(`${root}/${page}`, 'utf8');
  return [...text.matchAll(/```json\n([\s\S]*?)```/g)]
    .map((m) => JSON.parse(m[1]!) as Record<string, unknown>)
    .filter((value) => 'harnesses' in value);
}

describe('the configuration examples in the README and docs/drivers.md', () => {
  const env = { OPENAI_API_KEY: 'sk-example', OPENROUTER_API_KEY: 'or-example' };
  for (const page of ['README.md', 'docs/drivers.md'])
    it(`${page}: each parses as printed, and names its keys in envFrom`, () => {
      const examples = configExamples(page);
      assert.ok(examples.length > 0, `${page} has a configuration example`);
      for (const example of examples) {
        assert.deepEqual(parseHostConfig(example, env), example);
        assert.throws(
          () => parseHostConfig(example, {}),
          (error: unknown) => error instanceof HostError && error.code === 'env_missing',
        );
      }
    });
});
