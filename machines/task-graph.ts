import type { AnyStateNode } from 'xstate';
import { guardShape } from './task-guards.js';
import { TASK_MACHINE_VERSION, taskMachine } from './task-machine.js';

/** One state of the statechart, named by its dotted path (`assigned.ready`); the root is `''`. */
export interface GraphState {
  id: string;
  parent: string | null;
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  /** The initial child of a compound state. */
  initial?: string;
}

/** One transition as the machine defines it. `source` `''` means "in any state" (the root's `on`). */
export interface GraphTransition {
  source: string;
  event: string;
  /** Target state ids; empty for a targetless transition (the event is taken and retained in place). */
  targets: string[];
  guard?: string;
  actions: string[];
  reenter: boolean;
}

/** The Task statechart as data, read from `taskMachine`'s own state nodes (never drawn by hand). */
export interface TaskGraph {
  machine: string;
  version: number;
  initial: string;
  states: GraphState[];
  transitions: GraphTransition[];
  /** Every event type some transition takes, in first-seen order. */
  events: string[];
}

const pathOf = (node: AnyStateNode): string => node.path.join('.');

/**
 * Renders a guard as text: a name, or an `and`/`or`/`not` of guards built with task-guards.ts'
 * combinators, whose operands they remember (`guardShape`). Any other function guard is shown by
 * its function name.
 */
function describeGuard(guard: unknown): string | undefined {
  if (guard === undefined || guard === null) return undefined;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'object' && 'type' in guard && typeof guard.type === 'string') return guard.type;
  const shape = guardShape(guard);
  if (shape) {
    // An `or` inside an `and` (or a `not`) is parenthesised, so the label reads as the guard does.
    const parts = shape.parts.map((x) => {
      const text = describeGuard(x) ?? '?';
      return shape.kind !== 'or' && text.includes(' || ') ? `(${text})` : text;
    });
    if (shape.kind === 'not') return `!${parts.length === 1 ? parts[0] : `(${parts.join(' && ')})`}`;
    return parts.join(shape.kind === 'or' ? ' || ' : ' && ') || shape.kind;
  }
  if (typeof guard === 'function') return guard.name || 'guard';
  return 'guard';
}

function describeAction(action: unknown): string {
  if (typeof action === 'string') return action;
  if (typeof action === 'object' && action !== null && 'type' in action && typeof action.type === 'string')
    return action.type;
  if (typeof action === 'function') return action.name || 'action';
  return 'action';
}

/*
 * The walk is over XState's own state nodes rather than `xstate/graph`'s `toDirectedGraph`: that
 * gives one edge per target and turns a targetless transition into an edge back to its state (so
 * "taken and retained in place" could no longer be told from a re-entry), and it names no guard
 * or action; what it would replace is the dozen lines of `visit` below.
 */

/**
 * Walks `taskMachine.root` and returns its states and transitions. Pure: the same machine
 * always yields the same graph, in definition order.
 */
export function taskGraph(machine: { root: AnyStateNode; id: string } = taskMachine): TaskGraph {
  const states: GraphState[] = [];
  const transitions: GraphTransition[] = [];
  const events: string[] = [];
  const visit = (node: AnyStateNode): void => {
    const id = pathOf(node);
    if (node !== machine.root) {
      const state: GraphState = {
        id,
        parent: node.parent && node.parent !== machine.root ? pathOf(node.parent) : null,
        type: node.type,
      };
      const initial = node.initial?.target?.[0];
      if (initial) state.initial = pathOf(initial);
      states.push(state);
    }
    for (const [event, list] of node.transitions) {
      if (!events.includes(event)) events.push(event);
      for (const t of list) {
        const guard = describeGuard(t.guard);
        transitions.push({
          source: id,
          event,
          targets: (t.target ?? []).map(pathOf),
          ...(guard ? { guard } : {}),
          actions: t.actions.map(describeAction),
          reenter: t.reenter,
        });
      }
    }
    for (const child of Object.values(node.states)) visit(child);
  };
  visit(machine.root);
  return {
    machine: machine.id,
    version: TASK_MACHINE_VERSION,
    initial: pathOf(machine.root.initial!.target[0]!),
    states,
    transitions,
    events,
  };
}

/** The states a root-level ("any state") transition leaves from: every top-level state that is not final. */
function anyStateSources(graph: TaskGraph): string[] {
  return graph.states.filter((s) => s.parent === null && s.type !== 'final').map((s) => s.id);
}

const label = (t: GraphTransition): string =>
  `${t.event}${t.guard ? ` [${t.guard}]` : ''}${t.actions.length ? ` / ${t.actions.join(', ')}` : ''}`;
const mermaidId = (id: string): string => id.replace(/\./g, '_');
const mermaidLabel = (text: string): string => text.replace(/:/g, '#58;').replace(/;/g, '#59;');

/**
 * Mermaid `stateDiagram-v2`. Root-level transitions with a target are drawn from every top-level
 * non-final state (their meaning); targetless ones are self-loops on those states.
 */
export function toMermaid(graph: TaskGraph = taskGraph()): string {
  const lines = [
    'stateDiagram-v2',
    `  %% ${graph.machine} statechart, machine version ${graph.version} (generated from the machine definition)`,
  ];
  const children = (parent: string | null) => graph.states.filter((s) => s.parent === parent);
  const emitState = (s: GraphState, indent: string): void => {
    const kids = children(s.id);
    lines.push(`${indent}state "${s.id}" as ${mermaidId(s.id)}`);
    if (kids.length === 0) return;
    lines.push(`${indent}state ${mermaidId(s.id)} {`);
    if (s.initial) lines.push(`${indent}  [*] --> ${mermaidId(s.initial)}`);
    for (const k of kids) emitState(k, `${indent}  `);
    lines.push(`${indent}}`);
  };
  lines.push(`  [*] --> ${mermaidId(graph.initial)}`);
  for (const s of children(null)) emitState(s, '  ');
  for (const s of graph.states.filter((x) => x.type === 'final')) lines.push(`  ${mermaidId(s.id)} --> [*]`);
  const anywhere = graph.transitions.filter((t) => t.source === '' && t.targets.length === 0);
  for (const t of graph.transitions) {
    if (anywhere.includes(t)) continue;
    const sources = t.source === '' ? anyStateSources(graph) : [t.source];
    for (const source of sources) {
      for (const target of t.targets.length ? t.targets : [source]) {
        lines.push(`  ${mermaidId(source)} --> ${mermaidId(target)} : ${mermaidLabel(label(t))}`);
      }
    }
  }
  if (anywhere.length) {
    lines.push(`  note right of ${mermaidId(graph.initial)}`, '    taken in any non-final state, retained in place:');
    for (const t of anywhere) lines.push(`    ${label(t)}`);
    lines.push('  end note');
  }
  return lines.join('\n') + '\n';
}

const dotId = (id: string): string => JSON.stringify(id);
const ANY = '(any)';

/** Graphviz DOT: compound states are clusters; root-level transitions are drawn as in `toMermaid`. */
export function toDot(graph: TaskGraph = taskGraph()): string {
  const lines = [
    `digraph ${JSON.stringify(graph.machine)} {`,
    '  rankdir=LR;',
    '  compound=true;',
    '  node [shape=box, style=rounded];',
    '  __start [shape=point];',
  ];
  const emit = (parent: string | null, indent: string): void => {
    for (const s of graph.states.filter((x) => x.parent === parent)) {
      if (graph.states.some((x) => x.parent === s.id)) {
        lines.push(`${indent}subgraph ${dotId(`cluster_${s.id}`)} {`, `${indent}  label=${dotId(s.id)};`);
        emit(s.id, `${indent}  `);
        lines.push(`${indent}}`);
      } else {
        lines.push(`${indent}${dotId(s.id)}${s.type === 'final' ? ' [peripheries=2]' : ''};`);
      }
    }
  };
  emit(null, '  ');
  // Edges into a compound state point at its initial child (DOT edges join nodes, not clusters).
  const entry = (id: string): string => {
    const s = graph.states.find((x) => x.id === id);
    return s?.initial ? entry(s.initial) : id;
  };
  lines.push(`  __start -> ${dotId(entry(graph.initial))};`);
  // Root-level ("any state") transitions leave from one note-shaped node instead of every state.
  if (graph.transitions.some((t) => t.source === ''))
    lines.push(`  ${dotId(ANY)} [shape=note, label="any non-final state"];`);
  for (const t of graph.transitions) {
    const source = t.source === '' ? ANY : t.source;
    for (const target of t.targets.length ? t.targets : [source]) {
      const attrs = [`label=${dotId(label(t))}`];
      if (entry(source) !== source && source !== target) attrs.push(`ltail=${dotId(`cluster_${source}`)}`);
      if (entry(target) !== target && source !== target) attrs.push(`lhead=${dotId(`cluster_${target}`)}`);
      lines.push(`  ${dotId(entry(source))} -> ${dotId(entry(target))} [${attrs.join(', ')}];`);
    }
  }
  lines.push('}');
  return lines.join('\n') + '\n';
}
