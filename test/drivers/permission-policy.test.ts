import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  decidePermission,
  evidenceOf,
  permissionKey,
  RunPolicy,
  type PermissionEvidence,
} from '../../drivers/index.js';

// The policy is a pure function of the evidence: a table decides it. The mapping from what a
// provider asked to that evidence is pure too (the wire is exercised in acp-permission-policy).

const privateEdit: PermissionEvidence = {
  key: 'perm-x',
  kind: 'edit',
  title: 'write src/a.ts',
  command: null,
  paths: ['src/a.ts'],
  insideWorkspace: true,
  reversible: 'reversible',
  ownership: 'private',
  authority: 'held',
  approval: null,
  world: { bound: 'w1', current: 'w1' },
  budget: 'none',
  consequence: 'known',
};

describe('decidePermission', () => {
  const rows: [string, Partial<PermissionEvidence>, string, string][] = [
    ['allows a private reversible edit inside the workspace', {}, 'allow', 'private_reversible'],
    ['allows a read', { kind: 'read' }, 'allow', 'private_reversible'],
    ['refuses what the authority forbids', { authority: 'forbidden' }, 'refuse', 'authority_forbids'],
    [
      'refuses a forbidden action even with a current approval',
      { authority: 'forbidden', approval: { status: 'current', by: 'op' } },
      'refuse',
      'authority_forbids',
    ],
    ['escalates shared ownership', { ownership: 'shared' }, 'escalate', 'not_private'],
    ['escalates foreign ownership', { ownership: 'foreign' }, 'escalate', 'not_private'],
    ['escalates a path outside the workspace', { insideWorkspace: false }, 'escalate', 'outside_workspace'],
    ['escalates an irreversible action', { kind: 'delete', reversible: 'irreversible' }, 'escalate', 'not_reversible'],
    ['escalates an unknown consequence', { consequence: 'unknown' }, 'escalate', 'unknown_consequence'],
    ['escalates an institutional budget', { budget: 'institutional' }, 'escalate', 'institutional_budget'],
    ['escalates when the world moved', { world: { bound: 'w1', current: 'w2' } }, 'escalate', 'stale_world'],
    [
      'allows a shared action with a current approval',
      { ownership: 'shared', approval: { status: 'current', by: 'op' } },
      'allow',
      'approved',
    ],
    [
      'never uses an expired approval',
      { ownership: 'shared', approval: { status: 'expired', by: 'op' } },
      'escalate',
      'not_private',
    ],
    [
      'never uses a revoked approval',
      { consequence: 'unknown', approval: { status: 'revoked', by: 'op' } },
      'escalate',
      'unknown_consequence',
    ],
    [
      'never uses an approval bound to a world that moved',
      { ownership: 'shared', approval: { status: 'current', by: 'op' }, world: { bound: 'w0', current: 'w1' } },
      'escalate',
      'stale_world',
    ],
  ];
  for (const [title, over, answer, reason] of rows)
    it(title, () => assert.deepEqual(decidePermission({ ...privateEdit, ...over }), { answer, reason }));
});

describe('evidenceOf: what a request asked, as evidence', () => {
  const cwd = '/work/attempt';
  const policy = RunPolicy.parse({});
  const cases: [string, Parameters<typeof evidenceOf>[0], Partial<PermissionEvidence>][] = [
    [
      'an edit inside the workspace is private, reversible, known',
      { kind: 'edit', title: 'w', command: null, paths: ['/work/attempt/src/a.ts'] },
      { insideWorkspace: true, ownership: 'private', reversible: 'reversible', consequence: 'known' },
    ],
    [
      'an edit through .. leaves the workspace: shared, its reversal unknown, authority not held',
      { kind: 'edit', title: 'w', command: null, paths: ['../other/a.ts'] },
      { insideWorkspace: false, ownership: 'shared', reversible: 'unknown', authority: 'not_held' },
    ],
    [
      'a command has an unknown consequence',
      { kind: 'execute', title: 'run', command: 'make', paths: [cwd] },
      { consequence: 'unknown', reversible: 'unknown' },
    ],
    [
      'a fetch touches the shared network',
      { kind: 'fetch', title: 'get', command: null, paths: [] },
      { ownership: 'shared', consequence: 'unknown' },
    ],
    [
      'a delete is irreversible',
      { kind: 'delete', title: 'rm', command: null, paths: ['a.txt'] },
      { reversible: 'irreversible' },
    ],
  ];
  for (const [title, ask, want] of cases)
    it(title, () => {
      const evidence = evidenceOf(ask, cwd, policy);
      for (const [field, value] of Object.entries(want))
        assert.deepEqual(evidence[field as keyof PermissionEvidence], value, field);
    });

  it('marks a forbidden kind, an allowed key, a refused key and an allow whose world moved', () => {
    const ask = { kind: 'execute' as const, title: 'run', command: 'make deploy', paths: [] };
    const key = permissionKey(ask, cwd);
    const forbid = evidenceOf(ask, cwd, RunPolicy.parse({ forbid: ['execute'] }));
    assert.equal(forbid.authority, 'forbidden');
    const granted = evidenceOf(ask, cwd, RunPolicy.parse({ grants: [{ key, requestId: 'r', by: 'operator' }] }));
    assert.deepEqual(granted.approval, { status: 'current', by: 'operator' });
    assert.deepEqual(decidePermission(granted).answer, 'allow');
    const refused = RunPolicy.parse({ grants: [{ key, requestId: 'r', by: 'operator', answer: 'refuse' }] });
    assert.deepEqual(decidePermission(evidenceOf(ask, cwd, refused)), {
      answer: 'refuse',
      reason: 'authority_forbids',
    });
    const moved = RunPolicy.parse({ grants: [{ key, requestId: 'r', by: 'operator', world: 'moved' }] });
    assert.deepEqual(decidePermission(evidenceOf(ask, cwd, moved)), { answer: 'escalate', reason: 'stale_world' });
  });

  it('keys a request by its content: absolute or relative paths, their order and the title do not change it', () => {
    const a = permissionKey({ kind: 'edit', title: 'one', command: null, paths: ['/work/attempt/x', 'y'] }, cwd);
    const b = permissionKey({ kind: 'edit', title: 'two', command: null, paths: ['./y', 'x'] }, cwd);
    const c = permissionKey({ kind: 'edit', title: 'one', command: null, paths: ['x'] }, cwd);
    assert.equal(a, b);
    assert.notEqual(a, c);
    assert.match(a, /^perm-[0-9a-f]{20}$/);
  });
});
