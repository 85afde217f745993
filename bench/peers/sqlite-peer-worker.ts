import { parentPort, workerData } from 'node:worker_threads';
import type { RecoveryWorkerMessage, WireTask } from '../../recovery/index.js';
import { PeerWorkerInput, peerVerifier, verifyPeerRange } from './sqlite-peer-recovery.js';
import { SqlitePeerStore } from './sqlite-peer-store.js';

/** Worker of `rebuildPeerParallel`: verifies one Task id range of the SQLite peer from its own connection. */
const post = (message: RecoveryWorkerMessage) => parentPort!.postMessage(message);
try {
  const input = PeerWorkerInput.parse(workerData);
  const peer = SqlitePeerStore.open(input.path, { readOnly: true });
  try {
    const verifier = peerVerifier(peer);
    let chunk: WireTask[] = [];
    verifyPeerRange(
      peer,
      verifier,
      {
        ...(input.from !== undefined ? { from: input.from } : {}),
        ...(input.to !== undefined ? { to: input.to } : {}),
      },
      (task) => {
        chunk.push(task);
        if (chunk.length >= 500) {
          post({ type: 'tasks', tasks: chunk });
          chunk = [];
        }
      },
    );
    if (chunk.length > 0) post({ type: 'tasks', tasks: chunk });
    post({
      type: 'done',
      findings: verifier.findings,
      events: verifier.events,
      objects: verifier.objectCount,
      requests: [...verifier.requestOwners].map(([id, o]) => [id, [...o]]),
    });
  } finally {
    peer.close();
  }
} catch (error) {
  post({ type: 'failed', message: (error as Error).stack ?? String(error) });
}
