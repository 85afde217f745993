import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createMachine, setup } from 'xstate';
import { TASK_EVENT_TYPES, TASK_MACHINE_VERSION, taskMachine } from '../../machines/index.js';
import { taskGraph, toDot, toMermaid } from '../../machines/task-graph.js';
import { and, not, or } from '../../machines/task-guards.js';

const CLI = fileURLToPath(new URL('../../cli/ordivon.js', import.meta.url));

interface Config {
  states?: Record<string, Config>;
  on?: Record<string, unknown>;
  type?: string;
}

/** States and (source, event, alternatives) read from the machine's raw config, not its state nodes. */
function fromConfig(config: Config, prefix = ''): { states: string[]; transitions: Array<[string, string, number]> } {
  const states: string[] = [];
  const transitions: Array<[string, string, number]> = [];
  for (const [event, t] of Object.entries(config.on ?? {}))
    transitions.push([prefix, event, Array.isArray(t) ? t.length : 1]);
  for (const [name, child] of Object.entries(config.states ?? {})) {
    const id = prefix ? `${prefix}.${name}` : name;
    states.push(id);
    const sub = fromConfig(child, id);
    states.push(...sub.states);
    transitions.push(...sub.transitions);
  }
  return { states, transitions };
}

function ordivon(...args: string[]) {
  return spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
}

describe('the Task statechart graph', () => {
  const graph = taskGraph();
  const config = fromConfig(taskMachine.config as Config);

  it("has exactly the machine's states, initial state and version", () => {
    assert.deepEqual(
      graph.states.map((s) => s.id),
      config.states,
    );
    assert.equal(graph.initial, taskMachine.config.initial);
    assert.equal(graph.version, TASK_MACHINE_VERSION);
    assert.deepEqual(
      graph.states.filter((s) => s.type === 'final').map((s) => s.id),
      ['completed', 'cancelled'],
    );
    assert.equal(graph.states.find((s) => s.id === 'assigned')?.initial, 'assigned.compiling');
  });

  it('has every transition of the machine and takes every Task event type', () => {
    const counted = new Map<string, number>();
    for (const t of graph.transitions)
      counted.set(`${t.source}|${t.event}`, (counted.get(`${t.source}|${t.event}`) ?? 0) + 1);
    assert.deepEqual(counted, new Map(config.transitions.map(([source, event, n]) => [`${source}|${event}`, n])));
    assert.deepEqual([...graph.events].sort(), [...TASK_EVENT_TYPES].sort());
    const stale = graph.transitions.find((t) => t.source === '' && t.event === 'completion.propose');
    assert.deepEqual(stale, {
      source: '',
      event: 'completion.propose',
      targets: [],
      guard: 'staleGeneration',
      actions: ['rejectStale'],
      reenter: false,
    });
    const observe = graph.transitions.filter((t) => t.source === 'assigned.running' && t.event === 'run.observe');
    assert.deepEqual(
      observe.map((t) => [t.guard, t.targets]),
      [
        ['currentGeneration && sameRequest && !contextMatches', []],
        ['currentGeneration && sameRequest && stale', ['stale']],
        ['currentGeneration && sameRequest', ['evaluating']],
      ],
    );
  });

  it('`ordivon graph --format mermaid` names every state and every event, one edge per targeted transition', () => {
    const r = ordivon('graph', '--format', 'mermaid');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, toMermaid(graph));
    assert.match(r.stdout, /^stateDiagram-v2\n/);
    for (const s of config.states) assert.ok(r.stdout.includes(`state "${s}" as ${s.replace(/\./g, '_')}`), s);
    for (const e of TASK_EVENT_TYPES) assert.ok(r.stdout.includes(` : ${e}`) || r.stdout.includes(`    ${e} `), e);
    const topNonFinal = graph.states.filter((s) => s.parent === null && s.type !== 'final').length;
    const expected = graph.transitions.reduce(
      (n, t) => n + (t.source === '' ? (t.targets.length ? topNonFinal : 0) : Math.max(1, t.targets.length)),
      0,
    );
    assert.equal(r.stdout.split('\n').filter((l) => / --> [^[]/.test(l) && l.includes(' : ')).length, expected);
  });

  it('exports DOT and JSON of the same graph', () => {
    const json = ordivon('graph', '--format', 'json');
    assert.deepEqual(JSON.parse(json.stdout), graph);
    const dot = ordivon('graph', '--format', 'dot').stdout;
    assert.equal(dot, toDot(graph));
    for (const s of graph.states.filter((x) => x.type !== 'compound')) assert.ok(dot.includes(`"${s.id}"`), s.id);
    assert.ok(dot.includes('subgraph "cluster_assigned"'));
    const bad = ordivon('graph', '--format', 'png');
    assert.equal(bad.status, 2);
  });

  it('follows the machine it is given: a changed machine gives a changed graph', () => {
    const toy = setup({ guards: { a: () => true, b: () => true } }).createMachine({
      id: 'toy',
      initial: 'idle',
      states: {
        idle: {
          on: {
            go: { guard: and(['a', 'b']), target: 'busy' },
            try: { guard: and(['a', or(['b', not('a')])]), target: 'busy' },
          },
        },
        busy: {
          initial: 'one',
          states: { one: { on: { next: 'two' } }, two: { type: 'final' } },
          on: { stop: 'idle' },
        },
      },
    });
    const g = taskGraph(toy);
    assert.deepEqual(
      g.states.map((s) => s.id),
      ['idle', 'busy', 'busy.one', 'busy.two'],
    );
    assert.deepEqual(
      g.transitions.map((t) => [t.source, t.event, t.targets.join(), t.guard ?? '']),
      [
        ['idle', 'go', 'busy', 'a && b'],
        ['idle', 'try', 'busy', 'a && (b || !a)'],
        ['busy', 'stop', 'idle', ''],
        ['busy.one', 'next', 'busy.two', ''],
      ],
    );
    assert.equal(taskGraph(createMachine({ id: 'one', initial: 'only', states: { only: {} } })).states.length, 1);
  });
});
