import pg from 'pg';
import { z } from 'zod';
import { EventStore, StoreError, type AppendInput, type ObjectKinds, type OpenOptions } from '../../store/index.js';
import { PgHistory } from '../../store/postgres/index.js';
import { createDatabase, postgresPart, startPostgres, type PostgresServer } from './postgres.js';
import { tempDir } from './temp.js';

/** What a contract test may choose when it opens a store; the rest is the backend's. */
export interface BackendOpenOptions {
  /** An existing state root (default: a fresh one). */
  root?: string;
  /** Default: one kind, `note` ({ text }). */
  kinds?: ObjectKinds;
  streamWarnAt?: number;
  purpose?: string;
  readOnly?: boolean;
  /** postgres: a database another open made (default: a fresh one), to put several Hosts on one history. */
  url?: string;
  /** postgres: this store's Host (default `host-contract`). */
  hostId?: string;
  /** postgres: the history's client-side limit on one statement. */
  statementTimeoutMs?: number;
}

/** A store opened on a backend, and what it needs closed. */
export interface OpenedStore {
  store: EventStore;
  root: string;
  /** postgres: the authority the store commits through. */
  history?: PgHistory;
  /** postgres: the database the history is on. */
  url?: string;
  /** Another `EventStore.open` on the same root and authority (a second opener, a read-only reader); the caller closes it. */
  reopen(options?: Partial<Pick<OpenOptions, 'readOnly' | 'purpose'>>): EventStore;
  /** Closes the store, then the history. */
  close(): Promise<void>;
}

/** One implementation of the store contract: the suite runs once under `describe(backend.name, { skip: backend.skip })`. */
export interface StoreBackend {
  name: 'lmdb' | 'postgres';
  /** node:test's `skip` option: the reason when the backend's parts are missing here (never under CI=true). */
  skip: string | false;
  open(options?: BackendOpenOptions): Promise<OpenedStore>;
  /** For `after()`: stops what the backend started (the PostgreSQL server). */
  stop(): Promise<void>;
}

/** The object kinds contract tests use unless they need the Host's own. */
export const NOTE_KINDS: ObjectKinds = { note: z.object({ text: z.string() }) };

/** The options of `EventStore.open` both backends take alike (the postgres one adds its authority). */
function storeOptions(options: BackendOpenOptions): OpenOptions {
  const { root = tempDir(), kinds = NOTE_KINDS, streamWarnAt, purpose, readOnly } = options;
  return {
    root,
    kinds,
    ...(readOnly === undefined ? {} : { readOnly }),
    ...(streamWarnAt === undefined ? {} : { streamWarnAt }),
    ...(purpose === undefined ? {} : { purpose }),
  };
}

function lmdbBackend(): StoreBackend {
  return {
    name: 'lmdb',
    skip: false,
    async open(options = {}) {
      const opened = storeOptions(options);
      const store = EventStore.open(opened);
      return {
        store,
        root: opened.root,
        reopen: (more = {}) => EventStore.open({ ...opened, ...more }),
        close: () => store.close(),
      };
    },
    stop: () => Promise.resolve(),
  };
}

/**
 * The store mirroring a PostgreSQL authority: one server for the test file (started at the first
 * open), a fresh database per open unless `url` names one, so each test starts on an empty history.
 */
function postgresBackend(): StoreBackend {
  const part = postgresPart();
  let server: Promise<PostgresServer> | undefined;
  let databases = 0;
  return {
    name: 'postgres',
    skip: part.skip,
    async open(options = {}) {
      let { url } = options;
      const { hostId, statementTimeoutMs } = options;
      const opened = storeOptions(options);
      if (url === undefined) {
        server ??= startPostgres();
        url = await createDatabase((await server).url, `contract_${++databases}`);
      }
      const history = await PgHistory.open({
        url,
        hostId: hostId ?? 'host-contract',
        // Long: leases move only when a test moves them (backdated in SQL, released, claimed).
        leaseMs: 600_000,
        ...(statementTimeoutMs === undefined ? {} : { statementTimeoutMs }),
      });
      let store: EventStore;
      try {
        store = EventStore.open({ ...opened, authority: history });
      } catch (error) {
        await history.close();
        throw error;
      }
      return {
        store,
        root: opened.root,
        history,
        url,
        reopen: (more = {}) => EventStore.open({ ...opened, authority: history, ...more }),
        close: async () => {
          try {
            await store.close();
          } finally {
            await history.close();
          }
        },
      };
    },
    async stop() {
      const started = server;
      server = undefined;
      if (started) await (await started).stop();
    },
  };
}

/** The store contract's two implementations: the embedded LMDB store, and LMDB mirroring PostgreSQL. */
export function storeBackends(): StoreBackend[] {
  return [lmdbBackend(), postgresBackend()];
}

/** One statement on `url`, on a connection of its own (beside the histories' pools): for checks and for doctoring rows. */
export async function sql(url: string, text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

/** How many events the authority at `url` holds (of one Task, or all). */
export async function eventRows(url: string, taskId?: string): Promise<number> {
  const { rows } = await sql(
    url,
    `SELECT count(*)::int AS n FROM ordivon_events WHERE $1::text IS NULL OR task_id = $1`,
    [taskId ?? null],
  );
  return z.object({ n: z.number() }).parse(rows[0]).n;
}

/** An event of the `note` kinds for contract tests: what it references is `refs`. */
export function testEvent(id: string, refs: string[] = []): AppendInput['event'] {
  return {
    id,
    type: 'note.add',
    origin: 'host',
    at: '2026-01-01T00:00:00.000Z',
    mono: 1,
    data: {},
    refs,
    disposition: { admitted: true },
  };
}

/** An append of event `id` at `expectedRevision`, with the projection of the revision it makes; `more` overrides. */
export function appendInput(
  taskId: string,
  expectedRevision: number,
  id: string,
  more: Partial<AppendInput> = {},
): AppendInput {
  const revision = expectedRevision + 1;
  return {
    taskId,
    expectedRevision,
    event: testEvent(id),
    projection: { revision, machineVersion: 1, state: 'open', snapshot: { value: 'open' } },
    ...more,
  };
}

/** A StoreError's code, undefined for anything else: for `assert.rejects(…, (e) => storeCode(e) === …)`. */
export function storeCode(error: unknown): string | undefined {
  return error instanceof StoreError ? error.code : undefined;
}
