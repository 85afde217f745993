/**
 * The shared history on PostgreSQL (docs/many-hosts.md). Fencing is built from row data only: a
 * Task's row carries its head and the lease (`lease_owner`, `lease_epoch` bumped on every
 * acquisition, `lease_until` on the database clock); `ordivon_append` locks that row
 * `FOR NO KEY UPDATE`, compares the epoch and the revision, and writes everything of one
 * transition in the same transaction, so a former owner's append affects nothing. A claim takes
 * the row `FOR UPDATE SKIP LOCKED`, which waits out an append in flight.
 */
export const SCHEMA_VERSION = 2;

/**
 * What takes a database from each older version to the next, in one transaction under the
 * creators' advisory lock. Version 2 adds `ordivon_hosts.advertised_url` (nullable: Hosts of
 * version 1 still running write rows without it); Hosts of version 1 refuse a database at
 * version 2 (`format_unknown`) when they start again.
 */
export const SCHEMA_UPGRADES: Readonly<Record<number, string>> = {
  1: `ALTER TABLE ordivon_hosts ADD COLUMN IF NOT EXISTS advertised_url text`,
};

export const SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS ordivon_meta (
  name text PRIMARY KEY,
  value text NOT NULL
);
CREATE TABLE IF NOT EXISTS ordivon_tasks (
  task_id text PRIMARY KEY,
  revision bigint NOT NULL,
  digest text,
  lease_owner text,
  lease_epoch bigint NOT NULL,
  lease_until timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS ordivon_tasks_lease ON ordivon_tasks (lease_until);
CREATE TABLE IF NOT EXISTS ordivon_events (
  task_id text NOT NULL,
  revision bigint NOT NULL,
  event_id text NOT NULL,
  digest text NOT NULL,
  record text NOT NULL,
  -- Who wrote it, under which lease: audits (the cluster torture) check every write was fenced.
  host_id text NOT NULL,
  lease_epoch bigint NOT NULL,
  PRIMARY KEY (task_id, revision)
);
-- Every acquisition of a Task's lease: which Host got which epoch, when (database clock), and the
-- Task's head then. Every event written under an earlier epoch is at or below that revision: the
-- acquisition holds the row lock, so no later append of the old holder can get past the fence.
CREATE TABLE IF NOT EXISTS ordivon_lease_log (
  task_id text NOT NULL,
  lease_epoch bigint NOT NULL,
  host_id text NOT NULL,
  at timestamptz NOT NULL,
  revision bigint NOT NULL,
  PRIMARY KEY (task_id, lease_epoch)
);
CREATE TABLE IF NOT EXISTS ordivon_objects (
  digest text PRIMARY KEY,
  bytes bytea NOT NULL
);
CREATE TABLE IF NOT EXISTS ordivon_blobs (
  digest text PRIMARY KEY,
  bytes bytea NOT NULL
);
-- Which objects and blobs a Task's events wrote or named: what a Host taking the Task over reads.
CREATE TABLE IF NOT EXISTS ordivon_task_objects (
  task_id text NOT NULL,
  digest text NOT NULL,
  PRIMARY KEY (task_id, digest)
);
CREATE TABLE IF NOT EXISTS ordivon_claims (
  kind text NOT NULL,
  key text NOT NULL,
  task_id text NOT NULL,
  revision bigint NOT NULL,
  digest text,
  exclusive boolean NOT NULL,
  PRIMARY KEY (kind, key, task_id)
);
CREATE UNIQUE INDEX IF NOT EXISTS ordivon_claims_exclusive ON ordivon_claims (kind, key) WHERE exclusive;
CREATE INDEX IF NOT EXISTS ordivon_claims_task ON ordivon_claims (task_id);
CREATE TABLE IF NOT EXISTS ordivon_projections (
  task_id text PRIMARY KEY,
  revision bigint NOT NULL,
  record text NOT NULL
);
-- Each Host's heartbeat, renewed with its leases: a Host past heartbeat_until (database clock) or
-- stopped counts as gone, and so do the executors of its Runtime jobs.
CREATE TABLE IF NOT EXISTS ordivon_hosts (
  host_id text PRIMARY KEY,
  pid integer NOT NULL,
  started_at timestamptz NOT NULL,
  heartbeat_until timestamptz NOT NULL,
  stopped boolean NOT NULL DEFAULT false,
  -- Where clients reach the Host's control API (serve --advertise-url), for task_elsewhere answers.
  advertised_url text
);
-- Every Host's Runtime jobs (runtime/job-registry.ts), so a Host taking a Task over finds its
-- dispatch by exact clientRequestId. host_id is the Host whose Runtime ran the job (kept when
-- another Host records it abandoned); a final record is never replaced (the first terminal write
-- wins); one job per clientRequestId, so two Hosts cannot both start a request.
CREATE TABLE IF NOT EXISTS ordivon_jobs (
  job_id text PRIMARY KEY,
  host_id text NOT NULL,
  client_request_id text NOT NULL,
  record text NOT NULL,
  final boolean NOT NULL DEFAULT false
);
CREATE UNIQUE INDEX IF NOT EXISTS ordivon_jobs_request ON ordivon_jobs (client_request_id);

-- One transition, fenced: returns the digest stored at the revision when the same event id is
-- already there (a retry), else null. Raises OR001 lease_lost, OR002 revision_conflict (DETAIL:
-- the head), OR003 identity_conflict (DETAIL: the owner). A new stream takes the lease at epoch 1.
CREATE OR REPLACE FUNCTION ordivon_append(
  p_task text, p_expected bigint, p_host text, p_epoch bigint, p_lease_ms bigint,
  p_event_id text, p_digest text, p_record text, p_refs text[],
  p_object_digests text[], p_object_bytes bytea[], p_blob_digests text[], p_blob_bytes bytea[],
  p_claim_kinds text[], p_claim_keys text[], p_claim_digests text[], p_claim_exclusive boolean[],
  p_projection text
) RETURNS text LANGUAGE plpgsql AS $fn$
DECLARE
  v_revision bigint;
  v_owner text;
  v_epoch bigint;
  v_stored text;
  v_other text;
  i integer;
BEGIN
  SELECT revision, lease_owner, lease_epoch INTO v_revision, v_owner, v_epoch
    FROM ordivon_tasks WHERE task_id = p_task FOR NO KEY UPDATE;
  IF NOT FOUND AND p_expected = 0 THEN
    INSERT INTO ordivon_tasks (task_id, revision, digest, lease_owner, lease_epoch, lease_until)
      VALUES (p_task, 0, NULL, p_host, 1, now() + p_lease_ms * interval '1 millisecond')
      ON CONFLICT (task_id) DO NOTHING;
    SELECT revision, lease_owner, lease_epoch INTO v_revision, v_owner, v_epoch
      FROM ordivon_tasks WHERE task_id = p_task FOR NO KEY UPDATE;
    IF v_revision = 0 AND v_owner = p_host THEN
      p_epoch := v_epoch;
      INSERT INTO ordivon_lease_log (task_id, lease_epoch, host_id, at, revision) VALUES (p_task, v_epoch, p_host, now(), 0);
    END IF;
  END IF;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'task % has no stream', p_task USING ERRCODE = 'OR002', DETAIL = '0';
  END IF;
  IF v_revision <> p_expected THEN
    SELECT event_id, digest INTO v_other, v_stored FROM ordivon_events
      WHERE task_id = p_task AND revision = p_expected + 1;
    IF v_other = p_event_id THEN RETURN v_stored; END IF;
    RAISE EXCEPTION 'task %: expected revision %, head is %', p_task, p_expected, v_revision
      USING ERRCODE = 'OR002', DETAIL = v_revision::text;
  END IF;
  IF v_owner IS DISTINCT FROM p_host OR v_epoch <> p_epoch THEN
    RAISE EXCEPTION 'task %: lease epoch % is held by %, not % at %', p_task, v_epoch, coalesce(v_owner, 'nobody'), p_host, p_epoch
      USING ERRCODE = 'OR001', DETAIL = coalesce(v_owner, '');
  END IF;
  INSERT INTO ordivon_objects (digest, bytes)
    SELECT * FROM unnest(p_object_digests, p_object_bytes) ON CONFLICT DO NOTHING;
  INSERT INTO ordivon_blobs (digest, bytes)
    SELECT * FROM unnest(p_blob_digests, p_blob_bytes) ON CONFLICT DO NOTHING;
  INSERT INTO ordivon_task_objects (task_id, digest)
    SELECT DISTINCT p_task, d FROM unnest(p_refs || p_object_digests || p_blob_digests) AS d
    ON CONFLICT DO NOTHING;
  FOR i IN 1 .. coalesce(array_length(p_claim_kinds, 1), 0) LOOP
    IF p_claim_exclusive[i] THEN
      SELECT task_id INTO v_other FROM ordivon_claims
        WHERE kind = p_claim_kinds[i] AND key = p_claim_keys[i] AND exclusive AND task_id <> p_task;
      IF FOUND THEN
        RAISE EXCEPTION '% % already belongs to task %', p_claim_kinds[i], p_claim_keys[i], v_other
          USING ERRCODE = 'OR003', DETAIL = v_other;
      END IF;
    END IF;
    INSERT INTO ordivon_claims (kind, key, task_id, revision, digest, exclusive)
      VALUES (p_claim_kinds[i], p_claim_keys[i], p_task, p_expected + 1, p_claim_digests[i], p_claim_exclusive[i])
      ON CONFLICT (kind, key, task_id) DO UPDATE SET revision = EXCLUDED.revision, digest = EXCLUDED.digest;
  END LOOP;
  INSERT INTO ordivon_events (task_id, revision, event_id, digest, record, host_id, lease_epoch)
    VALUES (p_task, p_expected + 1, p_event_id, p_digest, p_record, p_host, p_epoch);
  INSERT INTO ordivon_projections (task_id, revision, record) VALUES (p_task, p_expected + 1, p_projection)
    ON CONFLICT (task_id) DO UPDATE SET revision = EXCLUDED.revision, record = EXCLUDED.record;
  UPDATE ordivon_tasks SET revision = p_expected + 1, digest = p_digest WHERE task_id = p_task;
  RETURN NULL;
END
$fn$;
`;
