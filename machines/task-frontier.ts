import type { AnyStateNode, StateValue } from 'xstate';
import { taskMachine, type TaskSnapshot } from './task-machine.js';
import { workOfTag, type FrontierWork } from './task-tags.js';

export type { FrontierWork } from './task-tags.js';

/**
 * A leaf state of the Task statechart by its dotted name (`assigned.ready`, `waiting`), derived
 * from the machine's own definition: a state renamed there fails to compile wherever its old name
 * is written as a `TaskStateName`. Two levels, as deep as the machine is; a deeper state would be
 * missing here, which test/machines/task-state-names.test.ts would report.
 */
export type TaskStateName = TaskSnapshot['value'] extends infer V
  ? V extends string
    ? V
    : { [K in keyof V & string]: `${K}.${V[K] & string}` }[keyof V & string]
  : never;

/** Dotted name of a Task state value, e.g. `assigned.ready`. */
export function stateName(value: StateValue): string {
  if (typeof value === 'string') return value;
  const [key, child] = Object.entries(value)[0] ?? ['', ''];
  return child === undefined ? key : `${key}.${stateName(child as StateValue)}`;
}

/** A leaf state node as the Host reads it: its name, its own and its ancestors' tags, whether it is final. */
interface Leaf {
  name: TaskStateName;
  tags: readonly string[];
  final: boolean;
}

// Read once from the state nodes, where the tags are written: the machine is the only table.
function leavesOf(node: AnyStateNode, inherited: readonly string[]): Leaf[] {
  const tags = [...inherited, ...node.tags];
  const children = Object.values(node.states);
  if (children.length === 0)
    return [{ name: node.path.join('.') as TaskStateName, tags, final: node.type === 'final' }];
  return children.flatMap((child) => leavesOf(child, tags));
}

const LEAVES = leavesOf(taskMachine.root, []);

/** Every leaf state of the Task statechart, in definition order. */
export const TASK_STATE_NAMES: readonly TaskStateName[] = LEAVES.map((leaf) => leaf.name);

const FRONTIER: ReadonlyMap<string, FrontierWork> = new Map(
  LEAVES.flatMap((leaf) => {
    const work = leaf.tags.map(workOfTag).find((w) => w !== undefined);
    return work ? [[leaf.name, work] as const] : [];
  }),
);

/** The frontier work a state value's `work:` tag names; `none` for a state without one. */
export function taskFrontier(value: StateValue): FrontierWork {
  return FRONTIER.get(stateName(value)) ?? 'none';
}

/** The state name and frontier of a Task's (persisted) snapshot: a finished actor has no work left. */
export function snapshotView(snapshot: { value?: unknown; status?: unknown }): {
  state: string;
  frontier: FrontierWork;
} {
  const value = snapshot.value as StateValue;
  return { state: stateName(value), frontier: snapshot.status === 'done' ? 'none' : taskFrontier(value) };
}

/**
 * Whether `state` (a dotted name, as `stateName` gives it) is one of `names`. The names are
 * typed: a state renamed in the machine fails to compile here, where a string comparison would
 * silently never match.
 */
export function isTaskState(state: string, ...names: readonly TaskStateName[]): boolean {
  return (names as readonly string[]).includes(state);
}

/**
 * States with no frontier work, tagged `resting`: the Task does nothing until an event arrives
 * (a new Assignment, an answer, a cancellation) or never again. What a caller waits for when it
 * waits for a Task to come to rest.
 */
export const RESTING_TASK_STATES: readonly TaskStateName[] = LEAVES.filter((leaf) => leaf.tags.includes('resting')).map(
  (leaf) => leaf.name,
);

/** States in which a Task takes no further events: the statechart's final states. */
export const FINAL_TASK_STATES: readonly TaskStateName[] = LEAVES.filter((leaf) => leaf.final).map((leaf) => leaf.name);

/** How the statechart took an event: admitted, or retained with the rejection it recorded. */
export type Disposition = { admitted: true } | { admitted: false; code: string };

/** Compares the context before and after a transition: one more rejection means the event was retained. */
export function classifyTransition(
  before: { rejected: number },
  after: { rejected: number; lastRejection: { reason: string } | null },
): Disposition {
  if (after.rejected > before.rejected && after.lastRejection)
    return { admitted: false, code: after.lastRejection.reason };
  return { admitted: true };
}
