import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HarnessRunReceipt } from '../../drivers/receipt.js';
import { RUN_STEPS_MAX, RunSteps, STEP_TEXT_MAX } from '../../drivers/run-steps.js';
import { receipt } from '../support/tasks.js';

describe("a run's steps, as the drivers record them for its receipt", () => {
  it('keeps messages and tool calls in order: chunks join their message, a tool call ends it, updates change the call in place', () => {
    const steps = new RunSteps();
    steps.message('Reading ');
    steps.message('the tests.', true);
    steps.tool('t1', { title: 'npm test', status: 'in_progress' });
    steps.message('more', true); // after a tool call: a new message, never the old one's tail
    steps.tool('t1', { status: 'completed', output: '1 failing' });
    assert.deepEqual(steps.receiptFields(), {
      steps: [
        { kind: 'message', text: 'Reading the tests.' },
        { kind: 'tool', id: 't1', title: 'npm test', status: 'completed', output: '1 failing' },
        { kind: 'message', text: 'more' },
      ],
    });
  });

  it('is bounded: at most RUN_STEPS_MAX steps, the rest counted; each text cut at STEP_TEXT_MAX and saying so', () => {
    const steps = new RunSteps();
    for (let i = 0; i < RUN_STEPS_MAX + 5; i++) steps.tool(`t${i}`, { title: `call ${i}` });
    steps.message('x'.repeat(STEP_TEXT_MAX + 10));
    const fields = steps.receiptFields();
    assert.equal(fields.steps?.length, RUN_STEPS_MAX);
    assert.equal(fields.stepsOmitted, 6);
    const cut = new RunSteps();
    cut.message('y'.repeat(STEP_TEXT_MAX + 10));
    assert.deepEqual(cut.receiptFields().steps, [
      { kind: 'message', text: `${'y'.repeat(STEP_TEXT_MAX)}… (10 more characters)` },
    ]);
    // What the drivers produce is what the receipt schema takes.
    assert.equal(HarnessRunReceipt.safeParse({ ...receipt('r', 'sha256:c'), ...fields }).success, true);
    assert.deepEqual(new RunSteps().receiptFields(), {});
  });
});
