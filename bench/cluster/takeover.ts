import { z } from 'zod';
import { HostGroup, sql } from './host-group.js';

export interface Takeover {
  servedMs: number;
  claimedMs: number;
  /** What was left of the killed Host's leases when it was killed (the latest of them). */
  remainingMs: number;
  tasks: number;
}

/**
 * One takeover: 3 Hosts on a fresh database share `tasks` Tasks (one Host cycle of history each);
 * the first is killed (SIGKILL, nothing released) and the time runs until each of its Tasks is
 * served by one of the others (as they report it) and, from the lease log, claimed by one. Fails
 * if the killed Host did not hold exactly the Tasks it created, if a survivor served one of them
 * before the kill, or if another Host than a survivor claimed one.
 */
export async function takeover(tasks: number, leaseMs: number, url: string): Promise<Takeover> {
  const hosts = await HostGroup.start(3, tasks, url, leaseMs);
  try {
    await hosts.drive(1);
    const [victim, ...survivors] = hosts.list;
    const victimId = hosts.ids[0]!;
    const held = (
      await sql(url, z.object({ task_id: z.string() }), `SELECT task_id FROM ordivon_tasks WHERE lease_owner = $1`, [
        victimId,
      ])
    ).map((r) => r.task_id);
    if (held.sort().join() !== hosts.share(0, tasks).join())
      throw new Error(
        `takeover: ${victimId} holds ${held.length} Tasks, not the ${hosts.share(0, tasks).length} it created`,
      );
    const served = new Map<string, number>();
    const waiting = new Set(held);
    let covered!: () => void;
    const allServed = new Promise<void>((resolve) => (covered = resolve));
    for (const survivor of survivors)
      survivor.onServing((taskIds, at) => {
        for (const id of taskIds) if (waiting.delete(id)) served.set(id, at);
        if (waiting.size === 0) covered();
      });
    const before = await Promise.all(survivors.map((s) => s.request({ type: 'watch' }, 'watching')));
    const early = before.flatMap((w) => w.taskIds).filter((id) => waiting.has(id));
    if (early.length > 0) throw new Error(`takeover: ${early.join(', ')} served elsewhere before the kill`);

    const killedAt = Date.now();
    await victim!.kill();
    const [lease] = await sql(
      url,
      z.object({ until: z.coerce.number().nullable() }),
      `SELECT extract(epoch FROM max(lease_until)) * 1000 AS until FROM ordivon_tasks WHERE lease_owner = $1`,
      [victimId],
    );
    if (lease?.until == null) throw new Error(`takeover: ${victimId}'s leases moved before it was killed`);
    // A bound on the wait, not a figure: a takeover that never comes fails the run and names what is left.
    const boundMs = 3 * leaseMs + 60_000;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`takeover: not served after ${boundMs / 1000} s: ${[...waiting].join(', ')}`)),
        boundMs,
      );
    });
    try {
      await Promise.race([allServed, bound, ...survivors.map((s) => s.failed)]);
    } finally {
      clearTimeout(timer);
    }
    const claims = await sql(
      url,
      z.object({ task_id: z.string(), host_id: z.string(), at: z.coerce.number() }),
      `SELECT DISTINCT ON (task_id) task_id, host_id, extract(epoch FROM at) * 1000 AS at FROM ordivon_lease_log
       WHERE task_id = ANY($1) AND host_id <> $2 ORDER BY task_id, lease_epoch`,
      [held, victimId],
    );
    const survivorIds = new Set(hosts.ids.slice(1));
    if (claims.length !== held.length || claims.some((c) => !survivorIds.has(c.host_id)))
      throw new Error(
        `takeover: the lease log shows ${claims.length} of ${held.length} Tasks claimed by the surviving Hosts`,
      );
    return {
      servedMs: Math.max(...served.values()) - killedAt,
      // Whole milliseconds, as the kill and the Hosts' reports are timed.
      claimedMs: Math.floor(Math.max(...claims.map((c) => c.at))) - killedAt,
      remainingMs: Math.floor(lease.until) - killedAt,
      tasks: held.length,
    };
  } finally {
    await hosts.stop();
  }
}
