// The least a process can do to answer `ordivon list` under the project's rules: import LMDB and
// zod, open the state root's environment read-only, and parse every stored projection with a zod
// schema before printing a line for it (every record read from disk is parsed). No CLI, no store
// module, no lock check. The startup scenario times it beside `ordivon list`, so the distance
// between the two is what the CLI itself adds.
//
//   node dist/bench/floors/list-floor.js ROOT
import { join } from 'node:path';
import { open } from 'lmdb';
import { z } from 'zod';

const Projection = z.looseObject({ state: z.string(), revision: z.number().int() });
const root = process.argv[2];
if (!root) {
  console.error('usage: node dist/bench/floors/list-floor.js ROOT');
  process.exit(2);
}
const env = open({ path: join(root, 'lmdb'), maxDbs: 16, readOnly: true });
// As the store reads them (store/databases.ts): plain msgpack maps, no record structures.
const plain: object = { useRecords: false };
const projections = env.openDB<unknown, string>('projections', plain);
const lines: string[] = [];
for (const { key, value } of projections.getRange()) {
  const p = Projection.parse(value);
  lines.push(`${key}  ${p.state}  r${p.revision}`);
}
console.log(lines.join('\n'));
await env.close();
