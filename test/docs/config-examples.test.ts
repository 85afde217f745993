import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { HostError } from '../../kernel/errors.js';
import { parseHostConfig } from '../../frontier/harness-config.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** Every ```json block of a page that has a `harnesses` key: the configuration examples. */
function configExamples(page: string): unknown[] {
  const text = readFileSync(`${root}/${page}`, 'utf8');
  return [...text.matchAll(/```json\n([\s\S]*?)```/g)]
    .map((m) => JSON.parse(m[1]!) as Record<string, unknown>)
    .filter((value) => 'harnesses' in value);
}

describe('the configuration examples in the README and docs/', () => {
  /** An environment that sets every variable the example names in `envFrom`. */
  const envFor = (example: unknown) =>
    Object.fromEntries(
      Object.values((example as { harnesses: Record<string, { envFrom?: string[] }> }).harnesses)
        .flatMap((h) => h.envFrom ?? [])
        .map((name) => [name, `${name.toLowerCase()}-example`]),
    );
  for (const page of ['README.md', 'docs/drivers.md', 'docs/stages.md', 'docs/agents.md'])
    it(`${page}: each parses as printed, and names its keys in envFrom`, () => {
      const examples = configExamples(page);
      assert.ok(examples.length > 0, `${page} has a configuration example`);
      for (const example of examples) {
        assert.deepEqual(parseHostConfig(example, envFor(example)), example);
        // An example that passes nothing from the environment (a local model, no key) needs none.
        if (Object.keys(envFor(example)).length === 0) continue;
        assert.throws(
          () => parseHostConfig(example, {}),
          (error: unknown) => error instanceof HostError && error.code === 'env_missing',
        );
      }
    });
});

describe('the real-agent recipes of docs/agents.md', () => {
  it('are examples/agents.config.json as it is: the file the real-agent tests launch from', () => {
    const page = readFileSync(`${root}/docs/agents.md`, 'utf8');
    const block = /```json\n([\s\S]*?)```/.exec(page);
    const file = JSON.parse(readFileSync(`${root}/examples/agents.config.json`, 'utf8')) as unknown;
    assert.deepEqual(JSON.parse(block![1]!), file);
  });
});
