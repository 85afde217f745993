import { setTimeout as delay } from 'node:timers/promises';
import { groupRunning } from './group-members.js';
import { groupAlive, ownsGroup, signalGroup, type GroupLeader } from './process-group.js';
import { memberRunning, signalMembers, type TreeMember } from './process-tree.js';

/** How a group was brought down: it was already gone, it went on SIGTERM, or it needed SIGKILL. */
export type GroupStop = 'gone' | 'terminated' | 'killed';

/** What `stopGroup` waits for after its last signal. */
export type GroupGone =
  /** No member runs any more; zombies count as stopped (they run nothing and hold no pipes). */
  | 'stopped'
  /**
   * The kernel no longer knows the group: `kill(-pgid, 0)` fails with ESRCH, so zombies must have
   * been reaped too (by us, or by init for orphans).
   */
  | 'reaped';

/** How `stopGroup` stops a group; each caller's needs are these options, not a stop of its own. */
export interface GroupStopOptions {
  /**
   * How long SIGTERM is given before SIGKILL. Omitted: SIGKILL at once, without SIGTERM (for a group
   * whose owner is dead or already gone, which nobody asks to tidy up any more).
   */
  graceMs?: number;
  /**
   * Ends the grace as soon as it settles (e.g. the leader exited and its pipes closed). Without it,
   * the grace ends as soon as no member of the group runs (polled).
   */
  settled?: Promise<unknown>;
  /** What the wait after the last signal waits for (see `GroupGone`). */
  until: GroupGone;
  /** Bound on that wait. */
  reapTimeoutMs: number;
  /**
   * Processes outside the group to stop with it: called before each signal, it returns the current
   * list, which gets the same signals and which the final wait also waits for (to stop running).
   */
  outside?: () => readonly TreeMember[];
  /** How often the waits look again; default 25 ms. */
  pollMs?: number;
}

/** What `stopGroup` did and saw. */
export interface GroupStopReport {
  stop: GroupStop;
  /**
   * True when SIGTERM was sent and its grace ran out (`settled` did not settle, or something of the
   * group still ran, within `graceMs`).
   */
  graceExpired: boolean;
  /** Whether the group was `until` (see `GroupStopOptions.until`) when the final wait ended. */
  gone: boolean;
}

const POLL_MS = 25;

/**
 * Stops the process group `leader` leads — the one process-group stop of Ordivon: SIGTERM to every member
 * (and to `outside`), then up to `graceMs` for `settled` (or for nothing of the group to run), then
 * SIGKILL to whatever still runs, then waits up to `reapTimeoutMs` until the group is `until`.
 * Without `graceMs`, SIGKILL at once, then the same wait.
 *
 * Never rejects for a group that is already gone (`stop: 'gone'`); `gone: false` when something
 * outlived the final wait. Orphans are reaped by init, which may take a moment; that wait is why
 * this polls rather than waiting on an event (there is no exit event for non-children).
 */
export async function stopGroup(leader: GroupLeader, options: GroupStopOptions): Promise<GroupStopReport> {
  const pollMs = options.pollMs ?? POLL_MS;
  const pgid = leader.pid;
  const sandbox = await sandboxOf(leader, options.reapTimeoutMs);
  let members: readonly TreeMember[] = sandbox;
  // The group, then its sandbox, then the members outside it; true when anything was signalled. The
  // group's signal goes first: bwrap then dies of it, as the job's record says, not of its sandbox's end.
  const signal = (name: NodeJS.Signals): boolean => {
    const outside = options.outside?.() ?? [];
    members = [...sandbox, ...outside];
    const group = signalGroup(leader, name);
    const confined = signalMembers(sandbox, 'SIGKILL') > 0;
    return signalMembers(outside, name) > 0 || group || confined;
  };
  // A group id that passed to another process is this group gone, not a group still to wait for.
  const ours = (): boolean => ownsGroup(leader);
  const running = (): boolean => (ours() && groupRunning(pgid)) || members.some(memberRunning);
  const gone =
    options.until === 'reaped' ? () => !(ours() && groupAlive(pgid)) && !members.some(memberRunning) : () => !running();
  const finish = async (stop: GroupStop, graceExpired: boolean): Promise<GroupStopReport> => ({
    stop,
    graceExpired,
    gone: await waitUntil(gone, options.reapTimeoutMs, pollMs),
  });

  if (options.graceMs === undefined) {
    if (!signal('SIGKILL')) return { stop: 'gone', graceExpired: false, gone: true };
    return finish('killed', false);
  }
  if (!signal('SIGTERM')) return { stop: 'gone', graceExpired: false, gone: true };
  const cut =
    options.settled !== undefined
      ? await settledWithin(options.settled, options.graceMs)
      : await waitUntil(() => !running(), options.graceMs, pollMs);
  if (!running()) return finish('terminated', !cut);
  signal('SIGKILL');
  return finish('killed', !cut);
}

/**
 * A confined group's sandbox init, once bwrap has reported it (at most `waitMs`): empty for an
 * unconfined group or a bwrap that ended before making a sandbox.
 *
 * bwrap's `--die-with-parent` is set late in the sandbox's setup: a bwrap signalled before then
 * dies alone, and the sandbox it already made runs on, orphaned, holding the job's pipes. So the
 * stop waits until bwrap has reported its sandbox, and SIGKILLs the sandbox's init right after whatever
 * the group gets. SIGKILL, because an init takes no other signal from outside its pid namespace
 * without a handler; its death ends every process in the sandbox, which is what bwrap's death does
 * to a sandbox past its setup: a confined tree never had a grace of its own.
 */
async function sandboxOf(leader: GroupLeader, waitMs: number): Promise<TreeMember[]> {
  if (leader.sandboxInit === undefined) return [];
  let timer: NodeJS.Timeout | undefined;
  const init = await Promise.race([
    leader.sandboxInit,
    new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), waitMs);
    }),
  ]);
  clearTimeout(timer);
  return init === undefined ? [] : [init];
}

/** Resolves true when `settled` settles (either way) within `ms`, false when `ms` passes first. */
async function settledWithin(settled: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([
    settled.then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]);
  clearTimeout(timer);
  return result;
}

/** Polls `condition` every `pollMs` until it holds (true) or `timeoutMs` passed (false). */
export async function waitUntil(condition: () => boolean, timeoutMs: number, pollMs = POLL_MS): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (condition()) return true;
    if (Date.now() >= deadline) return false;
    await delay(pollMs);
  }
}
