// The recovery path as the core commit shipped it (actors/recovery.ts at 12dd3d5), kept verbatim
// apart from import paths and names, and the head's and identity's findings, which it takes from
// recovery/ (their shape, not their cost), so the suite can report before/after figures from one run.
// Not used by the Host.
import { createActor } from 'xstate';
import { TASK_MACHINE_VERSION, classifyTransition, stateName, taskMachine } from '../machines/index.js';
import { EventRecord, StoreError, canonicalJson, digestOf, type EventStore } from '../store/index.js';
import type { Finding, TaskSnapshot } from '../kernel/index.js';
import { headFinding, identityFinding, machineEventOf } from '../recovery/index.js';

interface RebuiltTask {
  taskId: string;
  snapshot: TaskSnapshot;
  revision: number;
  headDigest: string;
}

interface RecoveryReport {
  tasks: RebuiltTask[];
  findings: Finding[];
  events: number;
  objects: number;
}

/**
 * Rebuilds every Task from its event stream and checks it (docs/design.md, invariant 7):
 * contiguous revisions from 1 and the digest chain up to the head (`stream_gap`,
 * `stream_corrupt`); every referenced object present and matching its digest (`object_missing`,
 * `object_corrupt`); replay through the statechart taking every event as it was recorded
 * (`replay_divergence`); the stored projection equal to the replayed snapshot
 * (`projection_drift`); no request or evidence identity claimed by two Tasks
 * (`identity_conflict`). Read-only: it never writes, so `doctor` runs it beside a live service.
 */
export function baselineRebuildAll(store: EventStore): RecoveryReport {
  const findings: Finding[] = [];
  const tasks: RebuiltTask[] = [];
  const verified = new Map<string, boolean>();
  const requestOwners = new Map<string, Set<string>>();
  let events = 0;

  const checkRef = (taskId: string, revision: number, ref: string) => {
    if (verified.has(ref)) {
      if (!verified.get(ref))
        findings.push({ code: 'object_corrupt', taskId, revision, object: ref, message: `object ${ref} is corrupt` });
      return;
    }
    const { objects, blobs } = store.databases;
    let ok = true;
    try {
      if (objects.doesExist(ref)) store.getObject(ref);
      else if (blobs.doesExist(ref)) store.getBlob(ref);
      else {
        findings.push({
          code: 'object_missing',
          taskId,
          revision,
          object: ref,
          message: `task ${taskId} revision ${revision} references missing object ${ref}`,
        });
        return;
      }
    } catch (error) {
      ok = false;
      const code = error instanceof StoreError && error.code === 'object_missing' ? 'object_missing' : 'object_corrupt';
      findings.push({
        code,
        taskId,
        revision,
        object: ref,
        message: `task ${taskId} revision ${revision}: ${(error as Error).message}`,
      });
    }
    verified.set(ref, ok);
  };

  const taskIds = new Set(store.taskIds());
  for (const taskId of streamIds(store)) taskIds.add(taskId);

  for (const taskId of [...taskIds].sort()) {
    const head = readOr(
      () => store.head(taskId),
      (e) => findings.push({ code: 'stream_corrupt', taskId, object: 'head', message: e }),
    );
    const actor = createActor(taskMachine).start();
    let expected = 1;
    let prevDigest: string | null = null;
    let failed = false;
    const stream = store.rawStream(taskId);
    for (;;) {
      let item: IteratorResult<{ revision: number; value: unknown }>;
      try {
        item = stream.next();
      } catch (error) {
        findings.push({
          code: 'stream_corrupt',
          taskId,
          revision: expected,
          object: `event ${expected}`,
          message: `task ${taskId} event ${expected} cannot be decoded: ${(error as Error).message}`,
        });
        failed = true;
        break;
      }
      if (item.done) break;
      const { revision, value } = item.value;
      events++;
      if (revision !== expected) {
        findings.push({
          code: 'stream_gap',
          taskId,
          revision: expected,
          object: `event ${expected}`,
          message: `task ${taskId}: event ${expected} is missing (next stored is ${revision})`,
        });
        failed = true;
        break;
      }
      const parsed = EventRecord.safeParse(value);
      if (!parsed.success) {
        findings.push({
          code: 'stream_corrupt',
          taskId,
          revision,
          object: `event ${revision}`,
          message: `task ${taskId} event ${revision} is malformed`,
        });
        failed = true;
        break;
      }
      const record = parsed.data;
      if (record.prev !== prevDigest) {
        findings.push({
          code: 'stream_corrupt',
          taskId,
          revision,
          object: `event ${revision}`,
          message: `task ${taskId} event ${revision} does not chain to event ${revision - 1} (prev ${record.prev ?? 'null'}, expected ${prevDigest ?? 'null'})`,
        });
        failed = true;
        break;
      }
      for (const ref of record.refs) checkRef(taskId, revision, ref);
      const before = actor.getSnapshot();
      actor.send(machineEventOf(record, revision));
      const after = actor.getSnapshot();
      const taken = classifyTransition(before.context, after.context);
      if (after === before || canonicalJson(taken) !== canonicalJson(record.disposition)) {
        findings.push({
          code: 'replay_divergence',
          taskId,
          revision,
          object: `event ${revision}`,
          message: `task ${taskId} event ${revision} (${record.type}) was recorded ${JSON.stringify(record.disposition)} but the statechart ${after === before ? 'does not take it' : `gives ${JSON.stringify(taken)}`}`,
        });
        failed = true;
        break;
      }
      if (record.type === 'dispatch.intend') {
        const id = String(record.data.clientRequestId);
        (requestOwners.get(id) ?? requestOwners.set(id, new Set()).get(id)!).add(taskId);
      }
      prevDigest = digestOf(record);
      expected++;
    }
    const last = expected - 1;
    const headWrong = failed ? undefined : headFinding(taskId, last, head, prevDigest);
    if (headWrong) {
      findings.push(headWrong);
      failed = true;
    }
    if (!failed) {
      const snapshot = actor.getSnapshot();
      const projection = readOr(
        () => store.projection(taskId),
        (e) => findings.push({ code: 'projection_drift', taskId, object: 'projection', message: e }),
      );
      const replayed = canonicalJson(taskMachine.getPersistedSnapshot(snapshot));
      const stale = projection !== undefined && projection.machineVersion !== TASK_MACHINE_VERSION;
      if (
        !stale &&
        (!projection ||
          projection.revision !== last ||
          projection.state !== stateName(snapshot.value) ||
          canonicalJson(projection.snapshot) !== replayed)
      ) {
        findings.push({
          code: 'projection_drift',
          taskId,
          revision: projection?.revision ?? last,
          object: 'projection',
          message: `task ${taskId}: stored projection ${projection ? `at revision ${projection.revision} (${projection.state})` : '(missing)'} differs from replay at revision ${last} (${stateName(snapshot.value)})`,
        });
      } else {
        tasks.push({ taskId, snapshot, revision: last, headDigest: prevDigest! });
      }
    }
    actor.stop();
  }

  for (const [id, owners] of requestOwners) {
    if (owners.size > 1) findings.push(identityFinding('request', id, owners));
  }
  const indexed = new Map<string, Set<string>>();
  for (const kind of ['request', 'evidence'] as const) {
    indexed.clear();
    for (const { key, taskId } of store.indexEntries(kind))
      (indexed.get(key) ?? indexed.set(key, new Set()).get(key)!).add(taskId);
    for (const [key, owners] of indexed) {
      if (owners.size > 1 && !(kind === 'request' && (requestOwners.get(key)?.size ?? 0) > 1))
        findings.push(identityFinding(kind, key, owners));
    }
  }
  return { tasks, findings, events, objects: verified.size };
}

/** Task ids that have events, whether or not they have a head. */
function* streamIds(store: EventStore): Generator<string> {
  let last: string | undefined;
  for (const key of store.databases.events.getKeys({ start: [''] as never, end: ['\uffff'] as never })) {
    if (!Array.isArray(key)) continue;
    const id = key[0] as string;
    if (id !== last) yield id;
    last = id;
  }
}

function readOr<T>(read: () => T, onError: (message: string) => void): T | undefined {
  try {
    return read();
  } catch (error) {
    onError((error as Error).message);
    return undefined;
  }
}
