// One Host of the cluster scenario (cluster.bench.ts), as a process of its own: a Supervisor on
// its own state root, on PostgreSQL (`store`) or on the embedded LMDB store, that creates and
// drives the Tasks it is told to over the IPC channel (protocol: cluster-protocol.ts).
//
//   node dist/bench/cluster/cluster-host.js '<HostConfig JSON>'   (forked, with an IPC channel)
import { createSupervisor, type Supervisor } from '../../kernel/index.js';
import { createDriven, drive, type Driven } from '../admission.bench.js';
import { FromHost, HostConfig, ToHost, WATCH_EVERY_MS } from './cluster-protocol.js';

function post(message: FromHost): void {
  process.send!(FromHost.parse(message));
}

async function main(): Promise<void> {
  if (!process.send) throw new Error('cluster-host runs forked, with an IPC channel');
  const config = HostConfig.parse(JSON.parse(process.argv[2] ?? ''));
  const sup: Supervisor = createSupervisor({
    state: config.state,
    purpose: 'bench cluster',
    ...(config.store
      ? {
          store: config.store,
          cluster: { hostId: config.hostId, leaseMs: config.leaseMs, renewEveryMs: config.renewEveryMs },
        }
      : {}),
  });
  await sup.start();
  const driven: Driven[] = [];
  let watch: NodeJS.Timeout | undefined;

  const handle = async (message: ToHost): Promise<void> => {
    switch (message.type) {
      case 'create':
        for (const taskId of message.taskIds) driven.push(await createDriven(sup, taskId));
        return post({ type: 'created', count: driven.length });
      case 'drive': {
        const startedAt = Date.now();
        const cpu = process.cpuUsage();
        const admitted = await drive(driven, message.cycles, message.firstSeed);
        const used = process.cpuUsage(cpu);
        const cpuMs = (used.user + used.system) / 1000;
        return post({ type: 'driven', admitted, startedAt, endedAt: Date.now(), cpuMs });
      }
      case 'watch': {
        const seen = new Set<string>();
        const fresh = () => {
          const ids = sup
            .listTasks()
            .map((t) => t.taskId)
            .filter((id) => !seen.has(id));
          for (const id of ids) seen.add(id);
          return ids;
        };
        post({ type: 'watching', taskIds: fresh(), at: Date.now() });
        watch = setInterval(() => {
          const at = Date.now();
          const ids = fresh();
          if (ids.length > 0) post({ type: 'serving', taskIds: ids, at });
        }, WATCH_EVERY_MS);
        return;
      }
      case 'stop':
        if (watch) clearInterval(watch);
        await sup.stop();
        // Nothing is left to flush once the Supervisor stopped; an idle handle must not keep the Host alive.
        process.exit(0);
    }
  };

  process.on('message', (raw) => {
    const parsed = ToHost.safeParse(raw);
    const done = parsed.success
      ? handle(parsed.data)
      : Promise.reject(new Error(`cluster-host: unreadable message: ${parsed.error.message}`));
    done.catch(fail);
  });
  post({ type: 'ready', hostId: sup.hostId ?? null, pid: process.pid });
}

/** Reports the failure, then exits 1 (a Host left half-working would only confuse the figures). */
function fail(error: unknown): void {
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  if (process.send && process.connected)
    process.send(FromHost.parse({ type: 'failed', message }), () => process.exit(1));
  else process.exit(1);
}

main().catch(fail);
