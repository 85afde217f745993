import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Error codes documented in the README's "Error codes" section, read from the README itself so
 * the documentation and the tests cannot drift apart. Reliability tests assert that every failure
 * they provoke is one of these.
 */
function documentedCodes(): Set<string> {
  const readme = readFileSync(fileURLToPath(new URL('../../../README.md', import.meta.url)), 'utf8');
  const section = readme.slice(readme.indexOf('## Error codes'));
  const end = section.indexOf('\n## ', 5);
  const table = end === -1 ? section : section.slice(0, end);
  const codes = new Set<string>();
  for (const line of table.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const first = line.split('|')[1] ?? '';
    for (const m of first.matchAll(/`([a-z_]+)`/g)) codes.add(m[1]!);
  }
  return codes;
}

export const DOCUMENTED_CODES: ReadonlySet<string> = documentedCodes();
