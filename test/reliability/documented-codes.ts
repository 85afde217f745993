import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Error codes documented in docs/errors.md, read from the page itself so
 * the documentation and the tests cannot drift apart. Reliability tests assert that every failure
 * they provoke is one of these.
 */
function documentedCodes(): Set<string> {
  const table = readFileSync(fileURLToPath(new URL('../../../docs/errors.md', import.meta.url)), 'utf8');
  const codes = new Set<string>();
  for (const line of table.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const first = line.split('|')[1] ?? '';
    for (const m of first.matchAll(/`([a-z_]+)`/g)) codes.add(m[1]!);
  }
  return codes;
}

export const DOCUMENTED_CODES: ReadonlySet<string> = documentedCodes();
