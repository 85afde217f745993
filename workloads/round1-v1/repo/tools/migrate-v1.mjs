// The version-bound change for record schema version 1 (catalog tool `migrate-v1`): the client
// reads versions 0 and 1, reads and checks version 1's tags, and still refuses every other
// version. It rewrites src/client.js in place and refuses (exit 1, file untouched) when the file
// is not the version 0 client it was written for, so running it twice is visible, not silent.
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../src/client.js', import.meta.url);
const edits = [
  ['export const SUPPORTED_SCHEMA_VERSIONS = Object.freeze([0]);', 'export const SUPPORTED_SCHEMA_VERSIONS = Object.freeze([0, 1]);'],
  [
    'function readTags(record) {\n  return [];\n}',
    [
      'function readTags(record) {',
      '  if (record.schemaVersion === 0) return [];',
      "  if (!Array.isArray(record.tags) || !record.tags.every((tag) => typeof tag === 'string'))",
      "    throw new RecordShapeError('tags: an array of strings (schema version 1)');",
      '  return [...record.tags];',
      '}',
    ].join('\n'),
  ],
];

let source = readFileSync(file, 'utf8');
for (const [from, to] of edits) {
  if (!source.includes(from)) {
    console.error(`migrate-v1: src/client.js is not the version 0 client (missing: ${from.split('\n')[0]})`);
    process.exit(1);
  }
  source = source.replace(from, to);
}
writeFileSync(file, source);
console.log('migrate-v1: src/client.js reads schema versions 0 and 1 and refuses any other');
