import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { z } from 'zod';
import { DEFAULT_LEASE_MS } from '../../store/postgres/index.js';
import { HostProcess } from './host-process.js';
import { benchTaskId } from '../workload.js';

/** The keeper's round in the cluster scenario: a third of the lease, the Host's own default. */
export const renewEvery = (leaseMs: number) => Math.floor(leaseMs / 3);

/** Hosts of one timed run, and their state roots. */
export class HostGroup {
  readonly list: HostProcess[] = [];
  readonly ids: Array<string | null> = [];
  private readonly dirs: string[] = [];

  private constructor(readonly count: number) {}

  /** Starts `count` Hosts (on `url` when given, else each on its embedded LMDB store) and creates Task i on Host i mod count. */
  static async start(count: number, tasks: number, url?: string, leaseMs = DEFAULT_LEASE_MS): Promise<HostGroup> {
    const hosts = new HostGroup(count);
    const started = await Promise.allSettled(
      Array.from({ length: count }, (_, k) => {
        const state = mkdtempSync(join(tmpdir(), 'ordivon-bench-cluster-'));
        hosts.dirs.push(state);
        const config = url
          ? { state, store: url, hostId: `bench-host-${k + 1}`, leaseMs, renewEveryMs: renewEvery(leaseMs) }
          : { state };
        return HostProcess.start(config, `host ${k + 1} of ${count}`);
      }),
    );
    for (const result of started)
      if (result.status === 'fulfilled') {
        hosts.list.push(result.value.host);
        hosts.ids.push(result.value.hostId);
      }
    try {
      const failed = started.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
      await Promise.all(
        hosts.list.map((h, k) => h.request({ type: 'create', taskIds: hosts.share(k, tasks) }, 'created')),
      );
      return hosts;
    } catch (error) {
      await hosts.kill();
      throw error;
    }
  }

  /** The Task ids Host k creates and serves. */
  share(k: number, tasks: number): string[] {
    const ids: string[] = [];
    for (let i = k; i < tasks; i += this.count) ids.push(benchTaskId(i));
    return ids;
  }

  /** Every Host drives its Tasks for `cycles` Host cycles at once; the admitted count, the window's length and the Hosts' CPU time. */
  async drive(cycles: number): Promise<{ admitted: number; windowMs: number; cpuMs: number }> {
    const answers = await Promise.all(
      this.list.map((h, k) => h.request({ type: 'drive', cycles, firstSeed: 9_973 + k * 1_000_000 }, 'driven')),
    );
    const admitted = answers.reduce((sum, a) => sum + a.admitted, 0);
    return {
      admitted,
      windowMs: Math.max(...answers.map((a) => a.endedAt)) - Math.min(...answers.map((a) => a.startedAt)),
      cpuMs: answers.reduce((sum, a) => sum + a.cpuMs, 0),
    };
  }

  async stop(): Promise<void> {
    try {
      await Promise.all(this.list.map((h) => h.stop()));
    } finally {
      await this.kill();
    }
  }

  /** Kills whatever still runs and removes the state roots. */
  async kill(): Promise<void> {
    await Promise.all(this.list.map((h) => h.kill()));
    for (const dir of this.dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  }
}

/** One statement on a connection of its own, each row parsed. */
export async function sql<T>(url: string, schema: z.ZodType<T>, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows.map((row) => schema.parse(row));
  } finally {
    await client.end();
  }
}
