import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  ADMISSION_FACTS,
  EXTERNAL_EVENT_TYPES,
  TASK_EVENTS,
  TASK_EVENT_TYPES,
  TaskEvent,
  taskMachine,
} from '../../machines/index.js';
import { GATHERED_FACTS } from '../../kernel/admission-facts.js';
import { EventInput, parseEventInput } from '../../kernel/event-input.js';

/**
 * The event catalog (machines/task-events.ts) is the one place an event type is defined: every
 * list of event types in the code derives from it, the kernel interprets its admission entries,
 * and docs/design.md's "Adding an external event" names the three files a new external event
 * touches. These checks hold the rest of the tree to that.
 */
const root = fileURLToPath(new URL('../../../', import.meta.url));
const source = (path: string) => readFileSync(`${root}${path}`, 'utf8');
const ENVELOPE = ['type', 'revision', 'origin'];

describe('the event catalog', () => {
  it('gives the event union, the type list and the allow-list', () => {
    assert.deepEqual(
      TaskEvent.options.map((o) => o.shape.type.value),
      TASK_EVENTS.map((d) => d.type),
    );
    assert.deepEqual(
      TASK_EVENT_TYPES,
      TASK_EVENTS.map((d) => d.type),
    );
    assert.deepEqual(
      EXTERNAL_EVENT_TYPES,
      TASK_EVENTS.filter((d) => d.external).map((d) => d.type),
    );
    assert.deepEqual(
      EventInput.options.map((o) => o.shape.type.value),
      TASK_EVENT_TYPES,
    );
  });

  it('has a transition in the statechart for every entry, and the statechart takes no other event', () => {
    // `xstate.*` are XState's own events (done, error, init).
    const taken = [...taskMachine.root.events].filter((type) => !type.startsWith('xstate.'));
    assert.deepEqual([...new Set(taken)].sort(), [...TASK_EVENT_TYPES].sort());
  });

  it('names only facts the kernel gathers, and the kernel gathers no fact the catalog cannot name', () => {
    assert.deepEqual([...GATHERED_FACTS].sort(), Object.keys(ADMISSION_FACTS).sort());
    for (const d of TASK_EVENTS)
      for (const fact of d.admission.facts) assert.ok(GATHERED_FACTS.includes(fact), `${d.type}: ${fact}`);
  });

  for (const d of TASK_EVENTS) {
    const fields = Object.keys(d.schema.shape).filter((f) => !ENVELOPE.includes(f));
    const sent = Object.keys(d.sent.shape);
    const filled = new Set([
      ...d.admission.facts.flatMap((fact) => ADMISSION_FACTS[fact]),
      ...(d.admission.object ? [d.admission.object.field] : []),
    ]);
    it(`${d.type}: every field the kernel writes comes from one of its facts or its object, and every one of those is its own`, () => {
      const kernelWritten = fields.filter((f) => !sent.includes(f));
      assert.deepEqual(
        kernelWritten.filter((f) => !filled.has(f)),
        [],
      );
      assert.deepEqual(
        [...filled].filter((f) => !fields.includes(f)),
        [],
      );
      if (d.admission.object) assert.equal(d.admission.object.kind, d.refs[d.admission.object.field]);
    });
  }

  it('is the only list of event types: the admission modules and the CLI name none', () => {
    for (const path of ['kernel/admission-facts.ts', 'kernel/kernel-event.ts', 'kernel/event-input.ts']) {
      const text = source(path);
      const named = TASK_EVENT_TYPES.filter((type) => text.includes(`'${type}'`) || text.includes(`"${type}"`));
      assert.deepEqual(named, [], path);
    }
    const send = /summary: '([^']*)'/.exec(source('cli/commands/write.ts').split('export const send')[1]!)?.[1];
    assert.ok(send !== undefined);
    assert.deepEqual(
      EXTERNAL_EVENT_TYPES.filter((type) => send.includes(type)),
      [],
    );
  });

  it('refuses an unknown type with the external types, from the catalog', () => {
    const refused = parseEventInput({ type: 'task.annotat' }, 'external');
    assert.ok('refusal' in refused);
    assert.equal(refused.refusal.code, 'invalid_event');
    assert.ok(refused.refusal.detail.endsWith(`a caller may send ${EXTERNAL_EVENT_TYPES.join(', ')}`));
  });

  it('docs/api.md#event-payloads has one row per external type, in the catalog order', () => {
    const section = source('docs/api.md').split('\n### Event payloads\n')[1]!.split('\n### ')[0]!;
    const rows = [...section.matchAll(/^\| `([a-z]+\.[a-z.]+)` \|/gm)].map((m) => m[1]);
    assert.deepEqual(rows, EXTERNAL_EVENT_TYPES);
  });

  it("docs/design.md's statechart table names each Host-only type once and defers the external ones to the payloads", () => {
    const section = source('docs/design.md').split('\n## The statechart (`machines/`)\n')[1]!.split('\n## ')[0]!;
    const row = section.split('\n').find((line) => line.startsWith('| `task.created`'))!;
    const named = [...row.split(' | ')[0]!.matchAll(/`([a-z]+)\.([a-z/]+)`/g)].flatMap(([, head, tails]) =>
      tails!.split('/').map((tail) => `${head}.${tail}`),
    );
    assert.deepEqual(named.sort(), TASK_EVENT_TYPES.filter((t) => !EXTERNAL_EVENT_TYPES.includes(t)).sort());
    assert.ok(section.includes('| each of `EXTERNAL_EVENT_TYPES`, one row each in [api.md](api.md#event-payloads)'));
  });

  it('docs/design.md names the three files of a new external event', () => {
    const section = source('docs/design.md').split('\n## Adding an external event\n')[1]!.split('\n## ')[0]!;
    const files = [...section.matchAll(/^\d\. `([^`]+)`/gm)].map((m) => m[1]);
    assert.deepEqual(files, ['machines/task-events.ts', 'machines/task-machine.ts', 'docs/api.md']);
  });
});
