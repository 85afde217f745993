import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  EXTERNAL_EVENT_TYPES,
  TASK_EVENTS,
  TASK_EVENT_TYPES,
  TaskEvent,
  claimsOf,
  refsOf,
} from '../../machines/index.js';

const d = (c: string) => `sha256:${c.repeat(64)}`;
const host = { origin: 'host', revision: 2 } as const;

describe('Task event definitions', () => {
  it('derive the type list in lifecycle order and the allow-list from the one union', () => {
    assert.deepEqual(
      TaskEvent.options.map((o) => o.shape.type.value),
      TASK_EVENT_TYPES,
    );
    assert.deepEqual(TASK_EVENT_TYPES, [
      'task.created',
      'assignment.commit',
      'context.compile',
      'dispatch.intend',
      'dispatch.ack',
      'dispatch.lost',
      'dispatch.reconcile',
      'run.observe',
      'completion.propose',
      'evaluation.settle',
      'verification.record',
      'decision.submit',
      'action.record',
      'effect.intend',
      'effect.record',
      'effect.lost',
      'effect.fail',
      'effect.reconcile',
      'effect.refuse',
      'effect.conflict',
      'request.open',
      'request.answer',
      'request.expire',
      'request.revoke',
      'goal.revise',
      'branch.open',
      'branch.observe',
      'branch.join',
      'task.cancel',
      'task.steer',
    ]);
    assert.deepEqual(EXTERNAL_EVENT_TYPES, [
      'assignment.commit',
      'completion.propose',
      'decision.submit',
      'request.answer',
      'goal.revise',
      'task.cancel',
      'task.steer',
    ]);
  });

  it('leave the digests the kernel writes out of what callers send', () => {
    const sent = Object.fromEntries(TASK_EVENTS.map((e) => [e.type, Object.keys(e.sent.shape)]));
    assert.deepEqual(sent['assignment.commit'], ['type', 'harness', 'purpose', 'generation', 'stage', 'instructions']);
    assert.deepEqual(sent['completion.propose'], [
      'type',
      'generation',
      'contextDigest',
      'evidence',
      'summary',
      'proposer',
    ]);
    for (const e of TASK_EVENTS) assert.ok(!('revision' in e.sent.shape) && !('origin' in e.sent.shape), e.type);
  });

  const cases: Array<[TaskEvent, string[]]> = [
    [
      { ...host, type: 'task.created', taskId: 't', attempt: 1, specDigest: d('1'), requiredArtifacts: ['a.json'] },
      [d('1')],
    ],
    [
      { ...host, type: 'assignment.commit', generation: 1, harness: 'h', purpose: 'p', assignmentDigest: d('2') },
      [d('2')],
    ],
    [{ ...host, type: 'context.compile', generation: 1, contextDigest: d('3') }, [d('3')]],
    [{ ...host, type: 'dispatch.intend', generation: 1, clientRequestId: 'r' }, []],
    [{ ...host, type: 'dispatch.ack', clientRequestId: 'r', jobId: 'j' }, []],
    [{ ...host, type: 'dispatch.lost', clientRequestId: 'r' }, []],
    [{ ...host, type: 'dispatch.reconcile', clientRequestId: 'r', jobIds: ['j'] }, []],
    [
      {
        ...host,
        type: 'run.observe',
        generation: 1,
        clientRequestId: 'r',
        contextDigest: d('3'),
        receiptDigest: d('4'),
        jobStatus: 'succeeded',
        evidence: { 'a.json': d('5'), 'b.json': d('6') },
      },
      [d('4'), d('5'), d('6')],
    ],
    [
      {
        ...host,
        type: 'completion.propose',
        generation: 1,
        contextDigest: 'none',
        proposalDigest: d('7'),
        evidence: { 'a.json': d('5') },
      },
      [d('7')],
    ],
    [{ ...host, type: 'evaluation.settle', generation: 1 }, []],
    [
      {
        ...host,
        type: 'verification.record',
        generation: 1,
        passed: true,
        verificationDigest: d('8'),
        sourceDigest: d('9'),
        outcomeDigest: d('a'),
      },
      [d('8'), d('a')],
    ],
    [
      {
        ...host,
        type: 'verification.record',
        generation: 1,
        passed: false,
        verificationDigest: d('8'),
        sourceDigest: d('9'),
        outcomeDigest: null,
      },
      [d('8')],
    ],
    [{ ...host, type: 'task.cancel', reason: 'r' }, []],
  ];
  for (const [event, refs] of cases) {
    it(`refsOf ${event.type}${event.type === 'verification.record' && !event.passed ? ' (failed)' : ''} names ${refs.length} objects`, () => {
      assert.deepEqual(refsOf(event), refs);
      assert.ok(TaskEvent.safeParse(event).success, event.type);
    });
  }

  it('an effect.reconcile names every receipt its lookup found', () => {
    const event: TaskEvent = {
      type: 'effect.reconcile',
      ...host,
      requestId: 't/a1/g1/effect',
      receiptDigests: [d('1'), d('2')],
    };
    assert.deepEqual(refsOf(event), [d('1'), d('2')]);
    assert.ok(TaskEvent.safeParse(event).success);
  });

  it('dispatch and Effect intents claim their request id; no other event claims anything', () => {
    for (const [event] of cases)
      assert.deepEqual(
        claimsOf(event),
        event.type === 'dispatch.intend' ? [{ kind: 'request', key: event.clientRequestId }] : [],
      );
    const intend = {
      type: 'effect.intend',
      ...host,
      generation: 1,
      requestId: 't/a1/g1/effect',
      candidateId: 'apply',
      intentDigest: d('3'),
      reconcile: 'host',
    } as const;
    assert.deepEqual(claimsOf(intend), [{ kind: 'request', key: 't/a1/g1/effect' }]);
  });
});
