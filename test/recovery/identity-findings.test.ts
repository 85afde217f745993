import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { identityFindings } from '../../recovery/identity-findings.js';

describe('identityFindings', () => {
  const index = {
    request: [
      { key: 'r1', taskId: 'a' },
      { key: 'r2', taskId: 'a' },
      { key: 'r2', taskId: 'b' },
      { key: 'r2', taskId: 'c' },
      { key: 'r3', taskId: 'b' },
      { key: 'r4', taskId: 'c' },
      { key: 'r4', taskId: 'd' },
    ],
    evidence: [
      { key: 'e1', taskId: 'a' },
      { key: 'e2', taskId: 'b' },
      { key: 'e2', taskId: 'd' },
    ],
  };

  it('names each key of the index held by more than one Task, with all its owners, in key order', () => {
    const findings = identityFindings(new Map(), (kind) => index[kind]);
    assert.deepEqual(
      findings.map((f) => [f.code, f.object, f.taskId]),
      [
        ['identity_conflict', 'request r2', 'a,b,c'],
        ['identity_conflict', 'request r4', 'c,d'],
        ['identity_conflict', 'evidence e2', 'b,d'],
      ],
    );
  });

  it('reports a request id claimed by two replayed Tasks once, from the events, not again from the index', () => {
    const findings = identityFindings(
      new Map([
        ['r4', new Set(['c', 'd'])],
        ['r1', new Set(['a'])],
      ]),
      (kind) => index[kind],
    );
    assert.deepEqual(
      findings.map((f) => f.object),
      ['request r4', 'request r2', 'evidence e2'],
    );
  });

  it('finds nothing when every key has one owner', () => {
    assert.deepEqual(
      identityFindings(new Map(), () => [
        { key: 'x', taskId: 'a' },
        { key: 'y', taskId: 'a' },
      ]),
      [],
    );
  });
});
