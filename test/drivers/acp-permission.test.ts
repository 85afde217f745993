import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pickPermission } from '../../drivers/acp/index.js';

// Option ids differ per agent (opencode `once`, codex-acp `approved`, gemini `proceed_once`); kinds do not.
const opencode = [
  { optionId: 'once', kind: 'allow_once' },
  { optionId: 'always', kind: 'allow_always' },
  { optionId: 'reject', kind: 'reject_once' },
];
const alwaysOnly = [
  { optionId: 'proceed_always', kind: 'allow_always' },
  { optionId: 'cancel', kind: 'reject_always' },
];

describe('pickPermission', () => {
  const rows = [
    {
      title: 'allow picks allow_once over allow_always',
      options: opencode,
      answer: 'allow',
      cancelling: false,
      want: { outcome: 'selected', optionId: 'once' },
    },
    {
      title: 'refuse picks reject_once',
      options: opencode,
      answer: 'refuse',
      cancelling: false,
      want: { outcome: 'selected', optionId: 'reject' },
    },
    {
      title: 'allow falls back to allow_always when no allow_once is offered',
      options: alwaysOnly,
      answer: 'allow',
      cancelling: false,
      want: { outcome: 'selected', optionId: 'proceed_always' },
    },
    {
      title: 'refuse falls back to reject_always',
      options: alwaysOnly,
      answer: 'refuse',
      cancelling: false,
      want: { outcome: 'selected', optionId: 'cancel' },
    },
    {
      title: 'escalate picks reject_once too: a run cannot wait for a person',
      options: opencode,
      answer: 'escalate',
      cancelling: false,
      want: { outcome: 'selected', optionId: 'reject' },
    },
    {
      title: 'an agent offering no option of the wanted kind gets cancelled',
      options: [{ optionId: 'x', kind: 'allow_once' }],
      answer: 'refuse',
      cancelling: false,
      want: { outcome: 'cancelled' },
    },
    {
      title: 'every request is answered cancelled once the turn is being cancelled',
      options: opencode,
      answer: 'allow',
      cancelling: true,
      want: { outcome: 'cancelled' },
    },
  ] as const;
  for (const row of rows) {
    it(row.title, () => {
      assert.deepEqual(pickPermission(row.options, row.answer, row.cancelling), row.want);
    });
  }
});
