import type { EventStore } from '../store/index.js';
import { Cluster } from './cluster/cluster.js';
import { RemoteCommits } from './cluster/remote-commits.js';
import { openStore } from './open-store.js';
import type { SupervisorOptions } from './supervisor-options.js';

/** What the Supervisor's `booting` step opened: the store and, on a shared history, the cluster and its watch. */
export interface OpenedHost {
  store: EventStore;
  cluster?: Cluster;
  /** With a cluster: other Hosts' commits as subscribers hear them. */
  remote?: RemoteCommits;
}

/**
 * The `booting` step: joins the cluster when `options.store` names one, then opens the state root
 * (taking its lock) as the cluster's mirror. When the store cannot be opened or prepared the
 * cluster is left, then the store (if opened) closed.
 */
export async function joinAndOpen(root: string, options: SupervisorOptions): Promise<OpenedHost> {
  const { purpose, streamWarnAt, store: url } = options;
  const cluster = url ? await Cluster.join({ url, ...options.cluster }) : undefined;
  let store: EventStore | undefined;
  try {
    store = openStore(root, {
      purpose: purpose ?? `supervisor pid ${process.pid}`,
      streamWarnAt,
      authority: cluster?.history,
      allowSharedRoot: options.allowSharedRoot,
    });
    if (!cluster) return { store };
    await cluster.prepare(store);
    const remote = new RemoteCommits((taskId, after, upTo) => cluster.history.readEvents(taskId, after, upTo));
    return { store, cluster, remote };
  } catch (error) {
    await cluster?.leave();
    await store?.close().catch(() => undefined);
    throw error;
  }
}
