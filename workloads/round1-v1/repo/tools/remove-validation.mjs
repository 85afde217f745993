// What the README's upgrade note amounts to: drop the schema-version check from parseRecord and
// read tags whenever a record has them. Version 1 records then parse, and so does every record of
// a version nobody specified. Kept so the frozen world can show what that change breaks.
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../src/client.js', import.meta.url);
const edits = [
  ['  if (!SUPPORTED_SCHEMA_VERSIONS.includes(record.schemaVersion)) throw new SchemaVersionError(record.schemaVersion);\n', ''],
  [
    'function readTags(record) {\n  return [];\n}',
    [
      'function readTags(record) {',
      '  if (record.tags === undefined) return [];',
      "  if (!Array.isArray(record.tags) || !record.tags.every((tag) => typeof tag === 'string'))",
      "    throw new RecordShapeError('tags: an array of strings');",
      '  return [...record.tags];',
      '}',
    ].join('\n'),
  ],
];

let source = readFileSync(file, 'utf8');
for (const [from, to] of edits) {
  if (!source.includes(from)) {
    console.error(`remove-validation: src/client.js is not the client this note was written for`);
    process.exit(1);
  }
  source = source.replace(from, to);
}
writeFileSync(file, source);
console.log('remove-validation: parseRecord no longer checks schemaVersion');
