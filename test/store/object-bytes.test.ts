import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { open } from 'lmdb';
import { OBJECT_KINDS } from '../../objects/index.js';
import { RecoveryVerifier, eventDigest, lmdbVerifySource, type RawEvent } from '../../recovery/index.js';
import {
  EventStore,
  StoreError,
  canonicalJson,
  digestOf,
  safeParseEventRecord,
  sha256,
  sha256Text,
  type EventRecord,
} from '../../store/index.js';
import { appendInput, sql, storeBackends, testEvent, type OpenedStore } from '../support/store-backends.js';
import { twoTaskRoot } from '../support/tamper.js';
import { tempDir } from '../support/temp.js';

const ASSIGNMENT = {
  kind: 'assignment',
  body: { taskId: 't-1', attempt: 1, generation: 1, harness: 'codex', purpose: 'diagnose', instructions: 'look' },
};

/** Where the store has an authority: each object and blob it holds there, with the sha256 of the bytes it holds. */
async function authorityBytes(opened: OpenedStore): Promise<Map<string, string> | undefined> {
  if (opened.url === undefined) return undefined;
  const { rows } = await sql(
    opened.url,
    `SELECT digest, 'sha256:' || encode(sha256(bytes), 'hex') AS sha FROM ordivon_objects
     UNION ALL SELECT digest, 'sha256:' || encode(sha256(bytes), 'hex') FROM ordivon_blobs`,
  );
  return new Map(rows.map((row: { digest: string; sha: string }) => [row.digest, row.sha]));
}

for (const backend of storeBackends()) {
  describe(backend.name, { skip: backend.skip }, () => {
    after(() => backend.stop());

    describe('objects are stored as their canonical JSON bytes', () => {
      it('stores exactly the bytes the digest is taken of, and reads them back checked', async () => {
        const opened = await backend.open({ kinds: OBJECT_KINDS });
        const { store } = opened;
        try {
          const digest = digestOf(ASSIGNMENT);
          await store.append(appendInput('t-1', 0, 'e1', { event: testEvent('e1', [digest]), objects: [ASSIGNMENT] }));
          const raw = store.rawObject(digest);
          assert.ok(raw && 'bytes' in raw);
          assert.equal(Buffer.from(raw.bytes).toString('utf8'), canonicalJson(ASSIGNMENT));
          assert.equal(sha256Text(canonicalJson(ASSIGNMENT)), digest);
          assert.deepEqual(store.getObject(digest, 'assignment'), ASSIGNMENT);
          const held = await authorityBytes(opened);
          if (held) assert.deepEqual([...held], [[digest, digest]]);
        } finally {
          await opened.close();
        }
      });

      it('keeps objects and blobs written ahead of their event (putObjects) like those written with it', async () => {
        const opened = await backend.open({ kinds: OBJECT_KINDS });
        const { store } = opened;
        try {
          const blob = Buffer.from('diagnosis');
          const ahead = await store.putObjects([ASSIGNMENT], [blob]);
          await store.append(appendInput('t-1', 0, 'e1', { event: testEvent('e1', ahead) }));
          assert.deepEqual(store.getObject(ahead[0]!, 'assignment'), ASSIGNMENT);
          assert.deepEqual(store.getBlob(ahead[1]!), blob);
          // Another Host taking the Task over copies its objects from the authority.
          const held = await authorityBytes(opened);
          if (held && opened.history) {
            assert.deepEqual(
              ahead.map((d) => held.get(d)),
              ahead,
            );
            const copy = await opened.history.copyTask('t-1');
            assert.deepEqual(
              [...copy.objects, ...copy.blobs].map((o) => o.digest),
              ahead,
            );
          }
        } finally {
          await opened.close();
        }
      });

      it("storedDigest hashes values in place, from a few bytes to past lmdb's read buffer, and tells absence apart", async () => {
        // lmdb's reusable read buffer starts small and grows; values beyond it take another path.
        const blobs = [Buffer.from('x'), Buffer.alloc(40_000, 7), Buffer.alloc(3_000_000, 9)];
        const digests = [digestOf(ASSIGNMENT), ...blobs.map((b) => sha256(b))];
        const opened = await backend.open({ kinds: OBJECT_KINDS });
        try {
          await opened.store.append(
            appendInput('t-1', 0, 'e1', { event: testEvent('e1', digests), objects: [ASSIGNMENT], blobs }),
          );
          // a read of a larger value first, then the smaller ones: each is cut to its own length
          const reader = opened.reopen({ readOnly: true });
          try {
            const order = [digests[3]!, digests[0]!, digests[1]!, digests[2]!, digests[3]!];
            assert.deepEqual(
              order.map((d) => reader.storedDigest(d)),
              [
                { in: 'blob', matches: true },
                { in: 'object', matches: true },
                { in: 'blob', matches: true },
                { in: 'blob', matches: true },
                { in: 'blob', matches: true },
              ],
            );
            assert.equal(reader.storedDigest(sha256Text('never stored')), undefined);
          } finally {
            await reader.close();
          }
          const held = await authorityBytes(opened);
          if (held)
            assert.deepEqual(
              digests.map((d) => held.get(d)),
              digests,
            );
        } finally {
          await opened.close();
        }
      });
    });
  });
}

// LMDB's byte layout, not the store contract: these write the environment's files directly.
describe('objects are stored as their canonical JSON bytes (lmdb layout)', () => {
  it('storedDigest tells a damaged blob from a sound one', async () => {
    const root = tempDir();
    const blobs = [Buffer.alloc(40_000, 7), Buffer.alloc(3_000_000, 9)];
    let store = EventStore.open({ root, kinds: OBJECT_KINDS });
    const digests = await store.putObjects([], blobs);
    await store.close();
    const env = open({ path: join(root, 'lmdb'), maxDbs: 16 });
    const raw = env.openDB('blobs', { encoding: 'binary' });
    const damaged = Buffer.from(blobs[1]!);
    damaged[1_500_000] = damaged[1_500_000]! ^ 1;
    await raw.put(digests[1]!, damaged);
    await env.close();
    store = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
    try {
      assert.deepEqual(
        [store.storedDigest(digests[1]!), store.storedDigest(digests[0]!)],
        [
          { in: 'blob', matches: false },
          { in: 'blob', matches: true },
        ],
      );
    } finally {
      await store.close();
    }
  });

  it('reads an object an older root stored as a msgpack map, and still refuses a damaged one', async () => {
    const root = tempDir();
    const object = {
      kind: 'assignment',
      body: { taskId: 't-1', attempt: 1, generation: 2, harness: 'acp', purpose: 'repair', instructions: 'fix' },
    };
    const digest = digestOf(object);
    await EventStore.open({ root, kinds: OBJECT_KINDS }).close();
    // What the previous layout wrote: a plain msgpack map under the digest.
    const env = open({ path: join(root, 'lmdb'), maxDbs: 16 });
    const legacy = env.openDB('objects', { useRecords: false } as never);
    await legacy.put(digest, object);
    await legacy.put(digestOf({ ...object, body: { ...object.body, generation: 3 } }), object);
    await env.close();
    const store = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
    try {
      assert.deepEqual(store.getObject(digest, 'assignment'), object);
      const wrongKey = digestOf({ ...object, body: { ...object.body, generation: 3 } });
      assert.throws(
        () => store.getObject(wrongKey),
        (e) => e instanceof StoreError && e.code === 'object_corrupt',
      );
      // its digest is taken of the decoded value, so the in-place check hands it back
      assert.equal(store.storedDigest(digest), 'legacy');
    } finally {
      await store.close();
    }
  });
});

describe('recovery checks object digests; doctor also checks bodies', () => {
  let root: string;
  before(async () => {
    ({ root } = await twoTaskRoot());
  });

  /**
   * task-a's stream with one more ref on its second event: an object whose bytes match its digest
   * but whose body is not a valid receipt (as if written under another schema), the chain and
   * head re-computed so that only the object is at fault.
   */
  function withForgedRef(store: EventStore): {
    events: RawEvent[];
    head: { revision: number; digest: string };
    forged: string;
    forgedText: string;
  } {
    const forgedText = canonicalJson({ kind: 'receipt', body: { driver: 'codex', note: 'not a receipt' } });
    const forged = sha256Text(forgedText);
    const events: RawEvent[] = [];
    let prev: string | null = null;
    for (const { key, value } of store.databases.events.getRange({
      start: ['task-a', 1],
      end: ['task-a', Number.MAX_SAFE_INTEGER],
    })) {
      const parsed = safeParseEventRecord(value);
      assert.ok(parsed.success);
      const record: EventRecord = {
        ...parsed.data,
        prev,
        refs: key[1] === 2 ? [...parsed.data.refs, forged] : parsed.data.refs,
      };
      prev = eventDigest(record);
      events.push({ revision: key[1], value: record });
    }
    return { events, head: { revision: events.length, digest: prev! }, forged, forgedText };
  }

  for (const bodies of [false, true]) {
    it(
      bodies
        ? 'with bodies (doctor, backups): the body is checked against its kind → object_corrupt'
        : 'at boot: the object matches its digest, so the Task rebuilds',
      async () => {
        const store = EventStore.open({ root, kinds: OBJECT_KINDS, readOnly: true });
        try {
          const { events, head, forged, forgedText } = withForgedRef(store);
          const real = lmdbVerifySource(store);
          const source = {
            ...real,
            rawObject: (digest: string) => (digest === forged ? { text: forgedText } : real.rawObject(digest)),
            // the digest-only check boot makes (EventStore.storedDigest), seeing the same forged object
            storedDigest: (digest: string) =>
              digest === forged
                ? { in: 'object' as const, matches: sha256Text(forgedText) === digest }
                : real.storedDigest!(digest),
          };
          const verifier = new RecoveryVerifier(source, OBJECT_KINDS, { bodies });
          const task = verifier.verifyStream('task-a', head, events);
          if (!bodies) {
            assert.deepEqual(verifier.findings, []);
            assert.equal(task?.revision, head.revision);
          } else {
            // The finding fails the boot or doctor run as a whole (the stream itself is intact).
            assert.deepEqual(
              verifier.findings.map((f) => [f.code, f.taskId, f.revision, f.object]),
              [['object_corrupt', 'task-a', 2, forged]],
            );
            assert.match(verifier.findings[0]!.message, /is not a valid receipt/);
          }
        } finally {
          await store.close();
        }
      },
    );
  }
});
