import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import pg from 'pg';
import {
  COMMITS_CHANNEL,
  CommitNotifier,
  MAX_PAYLOAD_BYTES,
  notifyPayloads,
} from '../../../store/postgres/commit-notifier.js';
import { createDatabase, postgresPart, sharedPostgres } from '../../support/postgres.js';

const part = postgresPart();

describe('notifyPayloads', () => {
  const cases: Array<{ name: string; ids: string[]; max?: number; payloads: string[] }> = [
    { name: 'no ids give no payload', ids: [], payloads: [] },
    { name: 'ids that fit are joined with commas', ids: ['a', 'b', 'c'], payloads: ['a,b,c'] },
    {
      name: 'a payload is cut before the id that would pass the limit',
      ids: ['aa', 'bb', 'cc'],
      max: 5,
      payloads: ['aa,bb', 'cc'],
    },
    {
      name: 'an id with a comma, an empty id and an id over the limit are left out',
      ids: ['a,b', '', 'toolong', 'ok'],
      max: 5,
      payloads: ['ok'],
    },
    { name: 'bytes are counted, not characters', ids: ['é', 'é'], max: 4, payloads: ['é', 'é'] },
  ];
  for (const { name, ids, max, payloads } of cases)
    it(name, () => assert.deepEqual(notifyPayloads(ids, max), payloads));

  it('keeps every payload of many long ids under PostgreSQL’s 8000 bytes, and every id in one of them', () => {
    const ids = Array.from({ length: 500 }, (_, i) => `task-${String(i).padStart(4, '0')}-${'x'.repeat(118)}`);
    const payloads = notifyPayloads(ids);
    assert.ok(payloads.length > 1);
    assert.ok(payloads.every((p) => Buffer.byteLength(p) <= MAX_PAYLOAD_BYTES && Buffer.byteLength(p) < 8000));
    assert.deepEqual(
      payloads.flatMap((p) => p.split(',')),
      ids,
    );
  });
});

describe('CommitNotifier on a real PostgreSQL', { skip: part.skip }, () => {
  const server = sharedPostgres();
  let url: string;
  before(async () => {
    url = await createDatabase(server().url, 'notifier');
  });

  it('sends the Tasks noted in one window as NOTIFYs under 8000 bytes each, naming each Task', async () => {
    const listener = new pg.Client({ connectionString: url });
    await listener.connect();
    await listener.query(`LISTEN ${COMMITS_CHANNEL}`);
    const payloads: string[] = [];
    listener.on('notification', (m) => payloads.push(m.payload ?? ''));
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    const sent: string[][] = [];
    const notifier = new CommitNotifier(async (p) => {
      sent.push(p);
      return pool.query(`SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p`, [COMMITS_CHANNEL, p]);
    }, 60_000);
    const ids = Array.from({ length: 200 }, (_, i) => `task-${i}-${'y'.repeat(100)}`);
    try {
      for (const id of ids) notifier.note(id);
      for (const id of ids.slice(0, 10)) notifier.note(id);
      // The window is a minute long: close() sends what is pending now.
      await notifier.close();
      assert.equal(sent.length, 1, 'one statement for the whole window');
      // A notification reaches a listener after the sending transaction committed; a round trip on
      // the listening connection then reads it.
      for (let i = 0; i < 100 && payloads.flatMap((p) => p.split(',')).length < ids.length; i++)
        await listener.query('SELECT 1');
      assert.ok(payloads.length > 1);
      assert.ok(payloads.every((p) => Buffer.byteLength(p) < 8000));
      assert.deepEqual(payloads.flatMap((p) => p.split(',')).sort(), [...ids].sort());
    } finally {
      await listener.end();
      await pool.end();
    }
  });

  it('a NOTIFY that fails is dropped: note() and close() never throw', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    await pool.end();
    let tried = 0;
    const notifier = new CommitNotifier(async (p) => {
      tried++;
      return pool.query(`SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p`, [COMMITS_CHANNEL, p]);
    }, 60_000);
    notifier.note('task-1');
    await notifier.close();
    assert.equal(tried, 1);
    notifier.note('task-2');
    await notifier.close();
    assert.equal(tried, 1, 'nothing is sent after close');
  });
});
