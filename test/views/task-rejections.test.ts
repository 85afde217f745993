import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { taskRejections } from '../../views/task-runs.js';

const event = (revision: number, type: string, data: Record<string, unknown>, code?: string) => ({
  revision,
  type,
  data,
  disposition: code === undefined ? ({ admitted: true } as const) : ({ admitted: false, code } as const),
});

describe('taskRejections', () => {
  const events = [
    event(1, 'task.created', {}),
    event(5, 'completion.propose', { generation: 1 }, 'missing_artifact'),
    event(6, 'assignment.commit', { generation: 2 }),
    event(9, 'dispatch.reconcile', { clientRequestId: 'r' }, 'identity_conflict'),
    event(10, 'completion.propose', { generation: 1 }, 'stale_assignment'),
  ];

  it('lists every rejected event from the journal, with the detail of the latest from the context', () => {
    assert.deepEqual(taskRejections(events, { revision: 10, generation: 1, detail: 'generation 1 < current 2' }), [
      { revision: 5, event: 'completion.propose', reason: 'missing_artifact', generation: 1 },
      { revision: 9, event: 'dispatch.reconcile', reason: 'identity_conflict', generation: null },
      {
        revision: 10,
        event: 'completion.propose',
        reason: 'stale_assignment',
        generation: 1,
        detail: 'generation 1 < current 2',
      },
    ]);
  });

  it('takes the generation the statechart recorded for the latest when the event names none', () => {
    const [, identity] = taskRejections(events.slice(0, 4), { revision: 9, generation: 2, detail: '2 jobs claim r' });
    assert.deepEqual(identity, {
      revision: 9,
      event: 'dispatch.reconcile',
      reason: 'identity_conflict',
      generation: 2,
      detail: '2 jobs claim r',
    });
  });

  it('reads a context without lastRejection (machine version 1) from the journal alone', () => {
    assert.deepEqual(
      taskRejections(events, undefined).map((r) => [r.revision, r.reason, r.detail]),
      [
        [5, 'missing_artifact', undefined],
        [9, 'identity_conflict', undefined],
        [10, 'stale_assignment', undefined],
      ],
    );
  });
});
