import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../support/temp.js';

const SCRIPT = fileURLToPath(new URL('../../examples/real-providers.js', import.meta.url));

// The example itself spends real tokens, so only its refusal path runs here: the environment is a
// boundary, parsed before anything is opened or written.
describe('examples/real-providers: configuration is checked before anything is written', () => {
  for (const missing of ['OPENAI_API_KEY', 'OPENROUTER_API_KEY']) {
    it(`without ${missing} it exits 2 with config_invalid naming it, and creates no state root`, () => {
      const state = join(tempDir(), 'state');
      const env: Record<string, string> = {
        PATH: process.env.PATH ?? '',
        HOME: tempDir(),
        OPENAI_API_KEY: 'sk-test',
        OPENROUTER_API_KEY: 'or-test',
      };
      delete env[missing];
      const r = spawnSync(process.execPath, [SCRIPT, '--state', state], { encoding: 'utf8', env });
      assert.equal(r.status, 2);
      assert.match(r.stderr, new RegExp(`^config_invalid: ${missing}: required`));
      assert.equal(existsSync(state), false);
    });
  }
});
