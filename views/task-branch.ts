import type { BranchState } from '../machines/index.js';
import type { EventRecord } from '../store/index.js';

/** A child Task as the branch view reads it now: its state and generation (undefined when it is not found here). */
export type ChildLookup = (taskId: string) => { state: string; generation: number } | undefined;

/** One child of a branch as `show` and the page draw it. */
export interface BranchChildView {
  taskId: string;
  harness: string;
  item: string | null;
  /** Its state now (its state at its end when it is not found here; `open` before it was created). */
  state: string;
  generation: number | null;
  /** `won`, `lost`, `cancelled` (by the join or its parent), `running` (not ended, no join yet). */
  outcome: 'won' | 'lost' | 'cancelled' | 'running';
  verified: boolean;
  /** Why it won or lost, in words: the join's reason, the refusal its end carried, or its end after the join. */
  why: string;
  outcomeDigest: string | null;
}

/** The current Assignment's branch (machine version 8) as a tree: its join and each child with why it won or lost. */
export interface BranchView {
  branchId: string;
  kind: 'parallel' | 'fanOut';
  join: string;
  generation: number;
  joined: boolean;
  winners: string[];
  reason: string | null;
  children: BranchChildView[];
}

/**
 * The branch view of a Task's context: each child's state now (`child`), whether it won, and
 * why, read from the parent's own `branch.observe` events (the refusal a lost child ended with).
 */
export function taskBranch(
  branch: BranchState | null | undefined,
  events: ReadonlyArray<{ revision: number } & EventRecord>,
  child: ChildLookup = () => undefined,
): BranchView | null {
  if (!branch) return null;
  const details = new Map<string, string>();
  for (const e of events) {
    if (e.type !== 'branch.observe') continue;
    const data = e.data as { branchId?: string; child?: string; detail?: string };
    if (data.branchId === branch.branchId && data.child && data.detail) details.set(data.child, data.detail);
  }
  const winners = branch.winners ?? [];
  const children = Object.entries(branch.children).map(([taskId, c]): BranchChildView => {
    const now = child(taskId);
    const won = winners.includes(taskId);
    const ended = c.state ?? now?.state ?? 'open';
    let outcome: BranchChildView['outcome'];
    let why: string;
    if (won) {
      outcome = 'won';
      why = branch.reason ?? 'taken by the join';
    } else if (c.late) {
      outcome = ended === 'cancelled' ? 'cancelled' : 'lost';
      why = `ended ${ended} after the join: superseded`;
    } else if (c.status === 'failed') {
      outcome = ended === 'cancelled' ? 'cancelled' : 'lost';
      why = `ended ${ended}${details.has(taskId) ? `: ${details.get(taskId)}` : ''}`;
    } else if (c.status === 'verified') {
      outcome = 'lost';
      why = branch.winners === null ? 'verified; the join is not made yet' : 'verified, not taken by the join';
    } else if (branch.winners !== null) {
      outcome = 'cancelled';
      why = 'still running at the join: cancelled';
    } else {
      outcome = 'running';
      why = 'not ended yet';
    }
    return {
      taskId,
      harness: c.harness,
      item: c.item,
      state: now?.state ?? ended,
      generation: now?.generation ?? null,
      outcome,
      verified: c.status === 'verified',
      why,
      outcomeDigest: c.outcomeDigest,
    };
  });
  return {
    branchId: branch.branchId,
    kind: branch.kind,
    join: branch.join,
    generation: branch.generation,
    joined: branch.winners !== null,
    winners,
    reason: branch.reason,
    children,
  };
}
