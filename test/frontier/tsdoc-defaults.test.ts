import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DEFAULT_APPROVALS } from '../../frontier/harness-config.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The TSDoc comment right above `member` in a declaration file, as an embedder's editor shows it. */
function docOf(file: string, member: string): string {
  const text = readFileSync(`${ROOT}${file}`, 'utf8');
  const at = text.indexOf(`    ${member}`);
  assert.notEqual(at, -1, `${file} declares ${member}`);
  const open = text.lastIndexOf('/**', at);
  return text.slice(open, at);
}

describe('TSDoc says the defaults the code has', () => {
  it('HostOptions.approvals names DEFAULT_APPROVALS as its default', () => {
    const doc = docOf('dist/host/host.d.ts', 'approvals?:');
    assert.match(doc, new RegExp(`default \`${DEFAULT_APPROVALS}\``));
    for (const other of ['accept', 'decline', 'route'].filter((p) => p !== DEFAULT_APPROVALS))
      assert.doesNotMatch(doc, new RegExp(`default \`${other}\``));
  });
});
