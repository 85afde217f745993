import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decidePermission } from '../../drivers/index.js';
import {
  ATTENTION_CASES,
  ATTENTION_POLICIES,
  attentionOracleLine,
  runAttentionOracle,
  scorePolicy,
} from '../../workloads/round1-v1/oracle.js';

// The oracle's answers are written by hand in the table; the policies are run on it here.

describe('the attention oracle', () => {
  it('has twelve cases, each named once', () => {
    assert.equal(ATTENTION_CASES.length, 12);
    assert.equal(new Set(ATTENTION_CASES.map((c) => c.name)).size, 12);
  });

  it('the evidence-rich policy (the function the drivers run) interrupts exactly the consequential cases', () => {
    const evidenceRich = ATTENTION_POLICIES.find((p) => p.name === 'evidence-rich')!;
    for (const c of ATTENTION_CASES)
      assert.equal(decidePermission(c.evidence).answer === 'escalate', c.interrupt, c.name);
    const count = scorePolicy(evidenceRich);
    assert.deepEqual(count, {
      policy: 'evidence-rich',
      cases: 12,
      interrupted: ATTENTION_CASES.filter((c) => c.interrupt).length,
      falseEscalations: 0,
      missed: 0,
      staleApprovals: 0,
      wrong: [],
    });
  });

  it('approval-everywhere and static-risk, on the same cases, interrupt needlessly or miss', () => {
    const [rich, everywhere, staticRisk] = runAttentionOracle();
    assert.equal(rich!.policy, 'evidence-rich');
    const consequential = ATTENTION_CASES.filter((c) => c.interrupt).length;
    assert.deepEqual(
      [everywhere!.interrupted, everywhere!.falseEscalations, everywhere!.missed],
      [12, 12 - consequential, 0],
    );
    // By kind only: a command or a delete is risky, an edit is not, whoever owns it and whatever moved.
    assert.deepEqual(staticRisk!.wrong, [
      'run the unit tests',
      'delete the run’s own scratch log',
      'edit the CI workflow other teams share',
      'rewrite the catalog manifest on a withdrawn approval',
      'apply the migration approved against an older schema',
    ]);
    assert.deepEqual([staticRisk!.falseEscalations, staticRisk!.missed, staticRisk!.staleApprovals], [2, 3, 0]);
    console.log(attentionOracleLine());
  });

  it('counts a policy that acts on a revoked or outdated approval as using a stale approval', () => {
    const trusting = {
      name: 'approval-trusting',
      decide: (e: (typeof ATTENTION_CASES)[number]['evidence']) =>
        e.approval
          ? ({ answer: 'allow', usedApproval: true } as const)
          : ({ answer: 'escalate', usedApproval: false } as const),
    };
    const count = scorePolicy(trusting);
    assert.equal(count.staleApprovals, 3);
    assert.equal(count.missed, 3);
  });

  it('prints the counts as one line', () => {
    assert.match(
      attentionOracleLine(),
      /^attention oracle: evidence-rich 7\/12 interrupted, 0 false, 0 missed, 0 stale; approval-everywhere 12\/12 interrupted, 5 false, 0 missed, 0 stale; static-risk 6\/12 interrupted, 2 false, 3 missed, 0 stale$/,
    );
  });
});
