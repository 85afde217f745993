import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { initialTransition, transition, type SnapshotFrom } from 'xstate';
import {
  EXTERNAL_EVENT_TYPES,
  RESTING_TASK_STATES,
  classifyTransition,
  stateName,
  taskFrontier,
  taskMachine,
  taskGraph,
  type TaskEvent,
  type TaskEventType,
} from '../../machines/index.js';

type Snap = SnapshotFrom<typeof taskMachine>;
type EventBody = TaskEvent extends infer E ? (E extends TaskEvent ? Omit<E, 'revision' | 'origin'> : never) : never;

const D = (c: string) => `sha256:${c.repeat(64).slice(0, 64)}`;

/** Applies events in order with pure transitions, numbering revisions from the snapshot's count. */
function run(events: Array<EventBody & { origin?: 'host' | 'external' }>, from?: Snap): Snap {
  let snap = from ?? initialTransition(taskMachine)[0];
  let revision = 0;
  for (const e of events) {
    revision++;
    const event = { origin: 'host', ...e, revision } as TaskEvent;
    assert.ok(snap.can(event), `${stateName(snap.value)} should take ${event.type}`);
    [snap] = transition(taskMachine, snap, event);
  }
  return snap;
}

const created: EventBody = {
  type: 'task.created',
  taskId: 't1',
  attempt: 1,
  specDigest: D('a'),
  requiredArtifacts: ['diagnosis.json', 'completion.json'],
};
const assign = (generation: number, purpose = 'diagnose') =>
  ({
    type: 'assignment.commit',
    generation,
    harness: generation % 2 ? 'codex' : 'hermes',
    purpose,
    assignmentDigest: D(String(generation)),
  }) as const;
const toRunning = (generation: number) =>
  [
    assign(generation),
    { type: 'context.compile', generation, contextDigest: D('c') },
    { type: 'dispatch.intend', generation, clientRequestId: `t1/a1/g${generation}` },
    { type: 'dispatch.ack', clientRequestId: `t1/a1/g${generation}`, jobId: `job-${generation}` },
  ] as const;

describe('task statechart', () => {
  it('walks the happy path to completed and records the outcome', () => {
    const snap = run([
      created,
      ...toRunning(1),
      {
        type: 'run.observe',
        generation: 1,
        clientRequestId: 't1/a1/g1',
        contextDigest: D('c'),
        receiptDigest: D('r'),
        jobStatus: 'succeeded',
        evidence: { 'diagnosis.json': D('d') },
      },
      { type: 'evaluation.settle', generation: 1 },
      ...toRunning(2),
      {
        type: 'run.observe',
        generation: 2,
        clientRequestId: 't1/a1/g2',
        contextDigest: D('c'),
        receiptDigest: D('s'),
        jobStatus: 'succeeded',
        evidence: { 'completion.json': D('e') },
      },
      { type: 'completion.propose', generation: 2, contextDigest: D('c'), proposalDigest: D('p'), evidence: {} },
      {
        type: 'verification.record',
        generation: 2,
        passed: true,
        verificationDigest: D('v'),
        sourceDigest: D('f'),
        outcomeDigest: D('o'),
      },
    ]);
    assert.equal(snap.value, 'completed');
    assert.equal(snap.status, 'done');
    assert.deepEqual(snap.context.outcome, { digest: D('o'), revision: 14 });
    assert.deepEqual(snap.context.evidence, {
      'diagnosis.json': { digest: D('d'), generation: 1 },
      'completion.json': { digest: D('e'), generation: 2 },
    });
    assert.deepEqual([snap.context.rejected, snap.context.lastRejection], [0, null]);
  });

  it('retains a proposal of an older generation as stale_assignment and changes nothing else', () => {
    const before = run([created, ...toRunning(1), assign(2, 'repair')]);
    const event = {
      type: 'completion.propose',
      generation: 1,
      contextDigest: D('c'),
      proposalDigest: D('p'),
      evidence: {},
      revision: 7,
      origin: 'external',
    } as TaskEvent;
    assert.ok(before.can(event));
    const [after] = transition(taskMachine, before, event);
    assert.equal(stateName(after.value), stateName(before.value));
    assert.deepEqual(classifyTransition(before.context, after.context), { admitted: false, code: 'stale_assignment' });
    const { rejected, lastRejection, ...rest } = after.context;
    assert.deepEqual(
      { ...before.context, rejected, lastRejection },
      {
        ...rest,
        rejected: 1,
        lastRejection: {
          event: 'completion.propose',
          reason: 'stale_assignment',
          generation: 1,
          revision: 7,
          detail: 'generation 1 < current 2',
        },
      },
    );
  });

  it('counts rejections and keeps only the latest, so the context does not grow with history', () => {
    const before = run([created, ...toRunning(1), assign(2, 'repair')]);
    let snap = before;
    const sizes: number[] = [];
    for (let i = 0; i < 40; i++) {
      const event = {
        type: 'completion.propose',
        generation: 1,
        contextDigest: D('c'),
        proposalDigest: D('p'),
        evidence: {},
        revision: 7 + i,
        origin: 'external',
      } as TaskEvent;
      const [next] = transition(taskMachine, snap, event);
      assert.deepEqual(classifyTransition(snap.context, next.context), { admitted: false, code: 'stale_assignment' });
      snap = next;
      sizes.push(JSON.stringify(taskMachine.getPersistedSnapshot(snap)).length);
    }
    assert.equal(snap.context.rejected, 40);
    assert.equal(snap.context.lastRejection?.revision, 46);
    // From the tenth rejection on, the revision in `lastRejection` has the same number of digits.
    assert.equal(new Set(sizes.slice(9)).size, 1, sizes.join(','));
  });

  it('sends a proposal lacking required evidence to waiting with missing_artifact', () => {
    const snap = run([
      created,
      ...toRunning(1),
      {
        type: 'run.observe',
        generation: 1,
        clientRequestId: 't1/a1/g1',
        contextDigest: D('c'),
        receiptDigest: D('r'),
        jobStatus: 'succeeded',
        evidence: { 'diagnosis.json': D('d') },
      },
      { type: 'completion.propose', generation: 1, contextDigest: D('c'), proposalDigest: D('p'), evidence: {} },
    ]);
    assert.equal(snap.value, 'waiting');
    assert.equal(snap.context.lastRejection?.reason, 'missing_artifact');
    assert.match(snap.context.lastRejection?.detail ?? '', /completion\.json/);
    assert.equal(snap.context.proposal, null);
    // a later Assignment can still complete it
    assert.ok(snap.can({ ...assign(2, 'repair'), revision: 8, origin: 'external' }));
  });

  it('retains a proposal naming another Context as context_mismatch', () => {
    const snap = run([
      created,
      ...toRunning(1),
      {
        type: 'run.observe',
        generation: 1,
        clientRequestId: 't1/a1/g1',
        contextDigest: D('c'),
        receiptDigest: D('r'),
        jobStatus: 'succeeded',
        evidence: { 'diagnosis.json': D('d'), 'completion.json': D('e') },
      },
      { type: 'completion.propose', generation: 1, contextDigest: D('x'), proposalDigest: D('p'), evidence: {} },
    ]);
    assert.equal(snap.value, 'evaluating');
    assert.equal(snap.context.lastRejection?.reason, 'context_mismatch');
  });

  it('checks the origin only of events both the Host and a caller may send (the kernel refuses Host-only ones from outside)', () => {
    const checked = new Set(
      taskGraph()
        .transitions.filter((t) => t.guard?.includes('fromHost'))
        .map((t) => t.event),
    );
    assert.deepEqual([...checked], ['decision.submit']);
    for (const type of checked) assert.ok(EXTERNAL_EVENT_TYPES.includes(type as TaskEventType), type);
  });

  it('moves a lost dispatch to unknown, stays there with no job, resumes with one and blocks with two', () => {
    const lost = run([created, ...toRunning(1).slice(0, 3), { type: 'dispatch.lost', clientRequestId: 't1/a1/g1' }]);
    assert.deepEqual(lost.value, { assigned: 'unknown' });
    assert.equal(taskFrontier(lost.value), 'reconcile');
    const none = {
      type: 'dispatch.reconcile',
      clientRequestId: 't1/a1/g1',
      jobIds: [],
      revision: 6,
      origin: 'host',
    } as TaskEvent;
    assert.equal(lost.can(none), false);
    const [one] = transition(taskMachine, lost, { ...none, jobIds: ['job-1'] } as TaskEvent);
    assert.deepEqual(one.value, { assigned: 'running' });
    assert.equal(one.context.dispatch?.jobId, 'job-1');
    const [two] = transition(taskMachine, lost, { ...none, jobIds: ['job-1', 'job-2'] } as TaskEvent);
    assert.equal(two.value, 'blocked');
    assert.equal(two.context.lastRejection?.reason, 'identity_conflict');
  });

  it('fences a replaced Assignment: the old run result is retained stale, the new generation runs', () => {
    const replaced = run([created, ...toRunning(1), assign(2, 'repair')]);
    assert.deepEqual(replaced.value, { assigned: 'compiling' });
    assert.equal(replaced.context.generation, 2);
    assert.equal(replaced.context.dispatch, null);
    const old = {
      type: 'run.observe',
      generation: 1,
      clientRequestId: 't1/a1/g1',
      contextDigest: D('c'),
      receiptDigest: D('r'),
      jobStatus: 'succeeded',
      evidence: { 'completion.json': D('e') },
      revision: 7,
      origin: 'host',
    } as TaskEvent;
    const [after] = transition(taskMachine, replaced, old);
    assert.deepEqual(after.context.evidence, {});
    assert.equal(after.context.lastRejection?.reason, 'stale_assignment');
  });

  it('refuses an Assignment that skips a generation', () => {
    const snap = run([created]);
    assert.equal(snap.can({ ...assign(2), revision: 2, origin: 'external' } as TaskEvent), false);
    assert.equal(snap.can({ ...assign(1), revision: 2, origin: 'external' } as TaskEvent), true);
  });

  it('cancels from any non-final state and then takes nothing more', () => {
    const snap = run([created, ...toRunning(1), { type: 'task.cancel', reason: 'operator' }]);
    assert.equal(snap.value, 'cancelled');
    assert.equal(snap.status, 'done');
    assert.equal(snap.can({ ...assign(2), revision: 7, origin: 'external' } as TaskEvent), false);
  });

  it('derives the frontier from the state alone', () => {
    assert.equal(taskFrontier({ assigned: 'ready' }), 'dispatch');
    assert.equal(taskFrontier({ assigned: 'dispatching' }), 'confirm_dispatch');
    assert.equal(taskFrontier('verifying'), 'verify');
    assert.equal(taskFrontier('waiting'), 'none');
  });

  it('lists as resting exactly the states whose frontier is none (new aside: it is left at creation)', () => {
    const leaves: string[] = [];
    const walk = (node: { states: Record<string, unknown> }, prefix: string): void => {
      for (const [key, child] of Object.entries(node.states) as Array<[string, { states: Record<string, unknown> }]>) {
        const name = prefix ? `${prefix}.${key}` : key;
        if (Object.keys(child.states).length) walk(child, name);
        else leaves.push(name);
      }
    };
    walk(taskMachine.root, '');
    const none = leaves.filter(
      (l) => l !== 'new' && taskFrontier(l.includes('.') ? { [l.split('.')[0]!]: l.split('.')[1]! } : l) === 'none',
    );
    assert.deepEqual([...none].sort(), [...RESTING_TASK_STATES].sort());
  });
});
