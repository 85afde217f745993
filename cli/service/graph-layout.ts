import type { ElkExtendedEdge, ElkNode } from 'elkjs';
import type { TaskGraph } from '../../machines/index.js';

/** One state placed on the page: absolute box, its name and kind. */
export interface PlacedState {
  id: string;
  parent: string | null;
  type: string;
  label: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** One transition drawn: the route ELK chose (absolute points) and where its label sits. */
export interface PlacedEdge {
  id: string;
  source: string;
  target: string;
  event: string;
  guard: string | null;
  points: Array<[number, number]>;
  label: { text: string; x: number; y: number; width: number; height: number };
}

/** `GET /graph/layout`: the statechart of `GET /graph` laid out by ELK's layered algorithm, every coordinate absolute. */
export interface GraphLayout {
  machine: string;
  version: number;
  width: number;
  height: number;
  states: PlacedState[];
  edges: PlacedEdge[];
}

// Text is measured nowhere on the server: a label's box is sized from its length at the page's
// 11px font, which is what ELK needs to keep labels from overlapping edges and states.
const CHAR_WIDTH = 6.4;
const LINE_HEIGHT = 14;
const STATE_HEIGHT = 30;

const leaf = (id: string) => id.split('.').pop() ?? id;

/** A transition's edge as handed to ELK, with the event and guard the page shows. */
type GraphEdge = ElkExtendedEdge & { event: string; guard: string | null };

/**
 * Lays out `graph` with elkjs (layered, left to right, compound states as ELK's nested nodes,
 * one edge per transition target with its event as a label). Self-transitions and the root's
 * targetless handlers (events refused in any state) are left out: they are not moves. Pure and
 * deterministic for a graph, so the service computes it once.
 */
export async function layoutGraph(graph: TaskGraph): Promise<GraphLayout> {
  const edges = edgesOf(graph);
  const root = elkRoot(nodesOf(graph), edges);
  // Loaded on the first layout only (1.5 MB of script a serve that nobody views never parses).
  // elkjs is CommonJS: under NodeNext its default export is the module, whose `default` is the class.
  const { default: elkjs } = await import('elkjs');
  const laid = await new elkjs.default().layout(root);
  return {
    machine: graph.machine,
    version: graph.version,
    width: Math.ceil(laid.width ?? 0),
    height: Math.ceil(laid.height ?? 0),
    states: placedStates(graph, laid.children),
    edges: placedEdges(laid.edges ?? [], edges),
  };
}

/** The states as ELK's nodes, each nested in its parent's `children`: the top-level ones. */
function nodesOf(graph: TaskGraph): ElkNode[] {
  const nodes = new Map<string, ElkNode>();
  for (const s of graph.states)
    nodes.set(s.id, {
      id: s.id,
      width: Math.max(70, leaf(s.id).length * CHAR_WIDTH + 24),
      height: STATE_HEIGHT,
      children: [],
      layoutOptions: { 'elk.padding': '[top=26,left=10,bottom=10,right=10]' },
    });
  const roots: ElkNode[] = [];
  for (const s of graph.states) (s.parent ? nodes.get(s.parent)!.children! : roots).push(nodes.get(s.id)!);
  return roots;
}

/** One edge per transition target, without self-transitions and the root's targetless handlers. */
function edgesOf(graph: TaskGraph): GraphEdge[] {
  const edges: GraphEdge[] = [];
  for (const t of graph.transitions) {
    if (t.source === '') continue;
    for (const target of t.targets) {
      if (target === t.source) continue;
      edges.push({
        id: `e${edges.length}`,
        sources: [t.source],
        targets: [target],
        event: t.event,
        guard: t.guard ?? null,
        labels: [{ text: t.event, width: t.event.length * CHAR_WIDTH, height: LINE_HEIGHT }],
      });
    }
  }
  return edges;
}

/** The graph ELK lays out: layered, left to right, every coordinate it answers absolute. */
function elkRoot(children: ElkNode[], edges: GraphEdge[]): ElkNode {
  return {
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      'elk.edgeRouting': 'ORTHOGONAL',
      // The states in the order the machine declares them (new, open, assigned, …): read left to right.
      'elk.layered.cycleBreaking.strategy': 'MODEL_ORDER',
      'elk.edgeLabels.inline': 'false',
      'elk.layered.spacing.nodeNodeBetweenLayers': '36',
      'elk.spacing.nodeNode': '18',
      'elk.spacing.edgeLabel': '2',
      'elk.json.shapeCoords': 'ROOT',
      'elk.json.edgeCoords': 'ROOT',
    },
    children,
    edges,
  };
}

/** The laid-out nodes as states, each parent before its children. */
function placedStates(graph: TaskGraph, laid: ElkNode[] | undefined): PlacedState[] {
  const states: PlacedState[] = [];
  const walk = (list: ElkNode[] | undefined) => {
    for (const n of list ?? []) {
      const s = graph.states.find((g) => g.id === n.id)!;
      states.push({
        id: n.id,
        parent: s.parent,
        type: s.type,
        label: leaf(n.id),
        x: n.x ?? 0,
        y: n.y ?? 0,
        width: n.width ?? 0,
        height: n.height ?? 0,
      });
      walk(n.children);
    }
  };
  walk(laid);
  return states;
}

/** The laid-out edges, in the order of `edges` (ELK's answer keeps it), with their route and label box. */
function placedEdges(laid: ElkExtendedEdge[], edges: GraphEdge[]): PlacedEdge[] {
  return laid.map((e, i) => {
    const section = e.sections?.[0];
    const label = e.labels?.[0];
    const points: Array<[number, number]> = section
      ? [section.startPoint, ...(section.bendPoints ?? []), section.endPoint].map((p) => [p.x, p.y])
      : [];
    return {
      id: e.id,
      source: edges[i]!.sources[0]!,
      target: edges[i]!.targets[0]!,
      event: edges[i]!.event,
      guard: edges[i]!.guard,
      points,
      label: {
        text: label?.text ?? edges[i]!.event,
        x: label?.x ?? 0,
        y: label?.y ?? 0,
        width: label?.width ?? 0,
        height: label?.height ?? 0,
      },
    };
  });
}
