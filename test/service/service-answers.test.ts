import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CliError } from '../../cli/cli-io.js';
import { parseListAnswer, parseSendAnswer } from '../../cli/service/cli-route.js';
import { parseShowView } from '../../cli/service/show-view.js';

const view = {
  taskId: 't1',
  revision: 9,
  state: 'waiting',
  frontier: 'none',
  title: 'Repair',
  context: {
    generation: 2,
    assignment: { harness: 'hermes', purpose: 'repair', generation: 2 },
    evidence: {},
    rejected: 1,
  },
  rejections: [
    {
      revision: 9,
      event: 'completion.propose',
      code: 'missing_artifact',
      generation: 2,
      detail: 'missing completion.json',
    },
    {
      revision: 10,
      event: 'decision.submit',
      code: 'context_stale',
      generation: 2,
      causes: [{ kind: 'stale', sourceId: 'spec', bound: 'sha256:aa', current: null, via: 'goal' }],
    },
  ],
  contexts: [
    {
      revision: 3,
      generation: 1,
      stage: 'diagnose',
      contextDigest: `sha256:${'c'.repeat(64)}`,
      promptDigest: null,
      goalRevision: 1,
      format: 'read-set',
      items: [
        {
          sourceId: 'goal',
          revision: 1,
          digest: `sha256:${'d'.repeat(64)}`,
          trust: 'trusted',
          claim: 'asserted',
          selectedBy: 'the Task goal',
          dependsOn: [],
        },
      ],
      candidates: [
        {
          id: 'declare-done',
          summary: '',
          authority: 'trusted',
          supportedBy: [{ sourceId: 'goal', trust: 'trusted' }],
          action: { kind: 'none' },
        },
      ],
    },
  ],
  runs: [
    {
      revision: 8,
      generation: 2,
      purpose: 'repair',
      harness: 'hermes',
      driver: 'acp',
      provider: 'hermes-like',
      jobStatus: 'succeeded',
      stopReason: 'end_turn',
      messages: 2,
      toolItemsStarted: 1,
      toolItemsCompleted: 1,
      finalText: 'none',
      evidence: {},
      refused: {},
      model: null,
    },
  ],
};

describe('a Task view for `ordivon show`', () => {
  it('keeps every field of a well-formed view, those it does not read included', () => {
    assert.deepEqual(parseShowView(view, 'service'), view);
  });

  it('refuses a view that does not parse with a code and the field path: service_error from a service, record_corrupt from the store', () => {
    const bad = { ...view, runs: [{ ...view.runs[0], harness: 7 }] };
    for (const [from, code] of [
      ['service', 'service_error'],
      ['store', 'record_corrupt'],
    ] as const) {
      assert.throws(
        () => parseShowView(bad, from),
        (e) =>
          e instanceof CliError && e.code === code && e.path === 'runs.0.harness' && /runs\.0\.harness/.test(e.message),
      );
    }
    assert.throws(
      () => parseShowView({ ...view, context: { ...view.context, evidence: undefined } }, 'service'),
      (e) => e instanceof CliError && e.path === 'context.evidence',
    );
    const badItem = { ...view.contexts[0]!, items: [{ ...view.contexts[0]!.items[0]!, trust: 'host' }] };
    assert.throws(
      () => parseShowView({ ...view, contexts: [badItem] }, 'service'),
      (e) => e instanceof CliError && e.code === 'service_error' && e.path === 'contexts.0.items.0.trust',
    );
  });
});

describe('a send or list answered by the service', () => {
  it("gives the library's SendResult (without the Task id) and the list rows", () => {
    assert.deepEqual(
      parseSendAnswer({
        taskId: 't1',
        kind: 'retained',
        admitted: false,
        written: true,
        code: 'stale_assignment',
        revision: 7,
        state: 'waiting',
      }),
      {
        kind: 'retained',
        admitted: false,
        written: true,
        code: 'stale_assignment',
        revision: 7,
        state: 'waiting',
      },
    );
    assert.deepEqual(
      parseListAnswer([{ taskId: 't1', state: 'open', revision: 1, generation: 0, title: 'kept out' }]),
      [{ taskId: 't1', state: 'open', revision: 1, generation: 0 }],
    );
  });

  it('refuses an answer that does not parse with service_error and the field path', () => {
    const refusedAt = (path: string) => (e: unknown) =>
      e instanceof CliError && e.code === 'service_error' && e.path === path;
    assert.throws(
      () => parseSendAnswer({ kind: 'admitted', admitted: 'yes', written: true, revision: 1, state: 'open' }),
      refusedAt('admitted'),
    );
    assert.throws(
      () => parseSendAnswer({ kind: 'admitted', admitted: true, written: true, state: 'open' }),
      refusedAt('revision'),
    );
    assert.throws(
      () => parseSendAnswer({ kind: 'taken', admitted: true, written: true, revision: 1, state: 'open' }),
      refusedAt('kind'),
    );
    assert.throws(
      () => parseListAnswer([{ taskId: 't1', state: 'open', revision: 1, generation: 0 }, { taskId: 2 }]),
      refusedAt('1.taskId'),
    );
    assert.throws(() => parseListAnswer({ tasks: [] }), refusedAt('(root)'));
  });
});
