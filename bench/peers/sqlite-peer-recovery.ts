import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { z } from 'zod';
import { OBJECT_KINDS } from '../../objects/index.js';
import {
  RecoveryVerifier,
  RecoveryWorkerMessage,
  identityFindings,
  restoreTaskSnapshot,
  sortById,
  type Finding,
  type RawEvent,
  type RebuiltTask,
  type RecoveryReport,
  type RecoveryWorkerMessage as Message,
  type VerifySource,
  type WireTask,
} from '../../recovery/index.js';
import { SqlitePeerStore } from './sqlite-peer-store.js';

/**
 * Verified recovery of the SQLite peer with the Host's own verifier (recovery/verifier.ts):
 * the same digest chain, object digests (Task spec bodies also against their schema), replay through the same statechart with
 * every disposition, head and projection comparison, and identity check. Only the reads differ:
 * rows come from `ORDER BY task_id, revision` range scans and JSON text is parsed.
 */

function peerSource(peer: SqlitePeerStore): VerifySource {
  const head = peer.db.prepare('SELECT revision, digest FROM heads WHERE task_id = ?');
  const projection = peer.db.prepare('SELECT body FROM projections WHERE task_id = ?').pluck();
  const object = peer.db.prepare('SELECT body FROM objects WHERE digest = ?').pluck();
  const blob = peer.db.prepare('SELECT bytes FROM blobs WHERE digest = ?').pluck();
  return {
    rawHead: (taskId) => head.get(taskId) ?? undefined,
    rawProjection: (taskId) => parseText(projection.get(taskId)),
    rawObject: (digest) => {
      const text = object.get(digest);
      return typeof text === 'string' ? { text } : undefined;
    },
    blob: (digest) => (blob.get(digest) as Buffer | undefined) ?? undefined,
  };
}

function parseText(text: unknown): unknown {
  return typeof text === 'string' ? JSON.parse(text) : undefined;
}

/** Every stream in [from, to), grouped, from one ordered scan; a row that is not JSON ends its stream with an error. */
function* peerStreams(
  peer: SqlitePeerStore,
  from?: string,
  to?: string,
): Generator<{ taskId: string; events: RawEvent[] }> {
  const where = [from !== undefined ? 'task_id >= @from' : '', to !== undefined ? 'task_id < @to' : '']
    .filter(Boolean)
    .join(' AND ');
  const rows = peer.db
    .prepare(`SELECT task_id, revision, body FROM events ${where ? `WHERE ${where}` : ''} ORDER BY task_id, revision`)
    .raw();
  let taskId: string | undefined;
  let group: RawEvent[] = [];
  for (const row of rows.iterate({ ...(from !== undefined ? { from } : {}), ...(to !== undefined ? { to } : {}) })) {
    const [id, revision, body] = row as [string, number, string];
    if (id !== taskId) {
      if (taskId !== undefined) yield { taskId, events: group };
      taskId = id;
      group = [];
    }
    if (group.at(-1)?.error !== undefined) continue;
    try {
      group.push({ revision, value: JSON.parse(body) });
    } catch (error) {
      group.push({ revision, error: (error as Error).message });
    }
  }
  if (taskId !== undefined) yield { taskId, events: group };
}

function headIds(peer: SqlitePeerStore, from?: string, to?: string): string[] {
  const where = [from !== undefined ? 'task_id >= @from' : '', to !== undefined ? 'task_id < @to' : '']
    .filter(Boolean)
    .join(' AND ');
  return peer.db
    .prepare(`SELECT task_id FROM heads ${where ? `WHERE ${where}` : ''} ORDER BY task_id`)
    .pluck()
    .all({ ...(from !== undefined ? { from } : {}), ...(to !== undefined ? { to } : {}) }) as string[];
}

function indexEntries(peer: SqlitePeerStore, kind: string): Array<{ key: string; taskId: string }> {
  return peer.db
    .prepare('SELECT key, task_id AS taskId FROM indexes WHERE kind = ? ORDER BY key, task_id')
    .all(kind) as Array<{ key: string; taskId: string }>;
}

/** Verifies the peer's Tasks in [from, to) on this thread; calls `onTask` with each that passed. */
export function verifyPeerRange(
  peer: SqlitePeerStore,
  verifier: RecoveryVerifier,
  range: { from?: string; to?: string },
  onTask: (task: WireTask) => void,
): void {
  const withHead = new Set(headIds(peer, range.from, range.to));
  const each = (taskId: string, events: RawEvent[]) => {
    const task = verifier.verifyStream(taskId, verifier.head(taskId), events);
    if (task)
      onTask({
        taskId,
        revision: task.revision,
        headDigest: task.headDigest,
        persisted: task.persisted,
        ...(task.spec !== undefined ? { spec: task.spec as WireTask['spec'] } : {}),
      });
  };
  for (const { taskId, events } of peerStreams(peer, range.from, range.to)) {
    withHead.delete(taskId);
    each(taskId, events);
  }
  for (const taskId of withHead) each(taskId, []);
}

export function peerVerifier(peer: SqlitePeerStore): RecoveryVerifier {
  return new RecoveryVerifier(peerSource(peer), OBJECT_KINDS);
}

/** `rebuildAll` on the SQLite peer, on the calling thread. */
export function rebuildPeer(path: string): RecoveryReport {
  const peer = SqlitePeerStore.open(path, { readOnly: true });
  try {
    const verifier = peerVerifier(peer);
    const tasks: RebuiltTask[] = [];
    verifyPeerRange(peer, verifier, {}, (t) => tasks.push(rebuiltOfWire(t)));
    const findings = [
      ...verifier.findings,
      ...identityFindings(verifier.requestOwners, (kind) => indexEntries(peer, kind)),
    ];
    return { tasks: sortById(tasks), findings, events: verifier.events, objects: verifier.objectCount };
  } finally {
    peer.close();
  }
}

function rebuiltOfWire(t: WireTask): RebuiltTask {
  return {
    taskId: t.taskId,
    snapshot: restoreTaskSnapshot(t.persisted),
    revision: t.revision,
    headDigest: t.headDigest,
    ...(t.spec ? { spec: t.spec } : {}),
  };
}

const PeerWorkerInput = z.object({ path: z.string(), from: z.string().optional(), to: z.string().optional() });
export type PeerWorkerInput = z.infer<typeof PeerWorkerInput>;
export { PeerWorkerInput };

/**
 * `rebuildParallel` on the SQLite peer: the same range split by head revisions over worker
 * threads, each with its own read-only connection, messages in the same protocol.
 */
export async function rebuildPeerParallel(
  path: string,
  workers = Math.min(availableParallelism(), 8),
  inThreadBelow = 20_000,
): Promise<RecoveryReport> {
  const peer = SqlitePeerStore.open(path, { readOnly: true });
  let weights: Array<{ taskId: string; revision: number }>;
  let requestIndex: Record<'request' | 'evidence', Array<{ key: string; taskId: string }>>;
  try {
    weights = peer.db.prepare('SELECT task_id AS taskId, revision FROM heads ORDER BY task_id').all() as typeof weights;
    requestIndex = { request: indexEntries(peer, 'request'), evidence: indexEntries(peer, 'evidence') };
  } finally {
    peer.close();
  }
  const total = weights.reduce((a, w) => a + w.revision, 0);
  // Same rule as rebuildParallel: short histories are verified on the calling thread.
  if (total < inThreadBelow || workers < 1) return rebuildPeer(path);
  const bounds: Array<string | undefined> = [undefined];
  let seen = 0;
  for (const { taskId, revision } of weights) {
    if (seen >= (total * bounds.length) / workers && bounds.length < workers) bounds.push(taskId);
    seen += revision;
  }
  bounds.push(undefined);
  const parts = await Promise.all(
    bounds.slice(0, -1).map(
      (from, i) =>
        new Promise<{ tasks: RebuiltTask[]; done: Extract<Message, { type: 'done' }> }>((resolve, reject) => {
          const to = bounds[i + 1];
          const input: PeerWorkerInput = {
            path,
            ...(from !== undefined ? { from } : {}),
            ...(to !== undefined ? { to } : {}),
          };
          const worker = new Worker(new URL('./sqlite-peer-worker.js', import.meta.url), {
            workerData: input,
            resourceLimits: { maxYoungGenerationSizeMb: 64 },
          });
          const tasks: RebuiltTask[] = [];
          worker.on('message', (raw: unknown) => {
            const message = RecoveryWorkerMessage.parse(raw);
            if (message.type === 'tasks') for (const t of message.tasks) tasks.push(rebuiltOfWire(t));
            else if (message.type === 'done') resolve({ tasks, done: message });
            else if (message.type === 'failed') reject(new Error(message.message));
          });
          worker.on('error', reject);
          worker.on('exit', (code) => reject(new Error(`peer worker exited ${code}`)));
        }),
    ),
  );
  const requestOwners = new Map<string, Set<string>>();
  for (const part of parts)
    for (const [id, owners] of part.done.requests)
      for (const o of owners) (requestOwners.get(id) ?? requestOwners.set(id, new Set()).get(id)!).add(o);
  const findings = [
    ...parts.flatMap((p) => p.done.findings as Finding[]),
    ...identityFindings(requestOwners, (kind) => requestIndex[kind]),
  ];
  return {
    tasks: sortById(parts.flatMap((p) => p.tasks)),
    findings,
    events: parts.reduce((a, p) => a + p.done.events, 0),
    objects: parts.reduce((a, p) => a + p.done.objects, 0),
  };
}
