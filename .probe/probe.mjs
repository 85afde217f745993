import { open } from 'lmdb';
import { z } from 'zod';
const P = z.object({ state: z.string(), revision: z.number() }).loose();
const env = open({ path: '/tmp/st/lmdb', maxDbs: 16, readOnly: true });
const db = env.openDB('projections', { useRecords: false });
const rows = [];
for (const { key, value } of db.getRange()) rows.push([key, P.parse(value).state]);
console.log(rows.map((r) => r.join(' ')).join('\n'));
