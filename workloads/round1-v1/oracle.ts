import { decidePermission, type PermissionAnswer, type PermissionEvidence } from '../../drivers/index.js';

/**
 * The attention oracle of the Round 1 world (docs/permissions.md): twelve permission requests a
 * maintenance provider could make, each with the evidence a Host would have and whether a person
 * must be interrupted. Three policies answer the same cases: one that asks about everything, one
 * that judges by the kind of operation alone, and the evidence-rich policy the drivers run.
 */
export interface AttentionCase {
  name: string;
  evidence: PermissionEvidence;
  /** Whether a person must decide before it happens (the oracle's answer, written by hand). */
  interrupt: boolean;
}

/** A private, reversible request inside the workspace with nothing pending on it. */
const base = (key: string, over: Partial<PermissionEvidence>): PermissionEvidence => ({
  key,
  kind: 'edit',
  title: key,
  command: null,
  paths: [],
  insideWorkspace: true,
  reversible: 'reversible',
  ownership: 'private',
  authority: 'held',
  approval: null,
  world: { bound: 'r7', current: 'r7' },
  budget: 'none',
  consequence: 'known',
  ...over,
});

export const ATTENTION_CASES: readonly AttentionCase[] = [
  {
    name: 'read the client module',
    interrupt: false,
    evidence: base('read-client', { kind: 'read', paths: ['src/client.ts'] }),
  },
  {
    name: 'bump the client to schema 1',
    interrupt: false,
    evidence: base('edit-client', { paths: ['src/client.ts'] }),
  },
  {
    name: 'add a compatibility test',
    interrupt: false,
    evidence: base('add-test', { paths: ['test/compat.test.ts'] }),
  },
  {
    name: 'run the unit tests',
    interrupt: false,
    evidence: base('run-tests', { kind: 'execute', command: 'npm test', paths: ['.'] }),
  },
  {
    name: 'delete the run’s own scratch log',
    interrupt: false,
    evidence: base('rm-scratch', { kind: 'delete', paths: ['.scratch/run.log'] }),
  },
  {
    name: 'edit the CI workflow other teams share',
    interrupt: true,
    evidence: base('edit-ci', { paths: ['.ci/shared-pipeline.yml'], ownership: 'shared' }),
  },
  {
    name: 'merge the pull request in the platform repository',
    interrupt: true,
    evidence: base('merge-platform', {
      kind: 'execute',
      command: 'gh pr merge 412 --repo platform/catalog',
      insideWorkspace: false,
      ownership: 'foreign',
      authority: 'not_held',
      reversible: 'irreversible',
    }),
  },
  {
    name: 'publish the client package on last week’s approval',
    interrupt: true,
    evidence: base('publish', {
      kind: 'execute',
      command: 'npm publish',
      reversible: 'irreversible',
      ownership: 'shared',
      approval: { status: 'expired', by: 'release manager' },
    }),
  },
  {
    name: 'rewrite the catalog manifest on a withdrawn approval',
    interrupt: true,
    evidence: base('edit-manifest', {
      paths: ['catalog/manifest.json'],
      approval: { status: 'revoked', by: 'catalog owner' },
      ownership: 'shared',
    }),
  },
  {
    name: 'apply the migration approved against an older schema',
    interrupt: true,
    evidence: base('apply-migration', {
      paths: ['db/migrations/0003.sql'],
      approval: { status: 'current', by: 'maintainer' },
      world: { bound: 'r5', current: 'r7' },
    }),
  },
  {
    name: 'start the paid load test on the shared account',
    interrupt: true,
    evidence: base('load-test', { kind: 'execute', command: 'loadgen --minutes 90', budget: 'institutional' }),
  },
  {
    name: 'run the vendor’s opaque fix-up script',
    interrupt: true,
    evidence: base('vendor-script', {
      kind: 'execute',
      command: './vendor/fixup.sh',
      paths: ['vendor/fixup.sh'],
      reversible: 'unknown',
      consequence: 'unknown',
    }),
  },
];

/** What a policy answered, and whether it acted on an approval. */
export interface PolicyAnswer {
  answer: PermissionAnswer;
  usedApproval: boolean;
}

export interface AttentionPolicy {
  name: string;
  decide(evidence: PermissionEvidence): PolicyAnswer;
}

const STATIC_RISKY: ReadonlySet<string> = new Set(['execute', 'fetch', 'delete', 'other']);

export const ATTENTION_POLICIES: readonly AttentionPolicy[] = [
  {
    name: 'evidence-rich',
    decide: (e) => {
      const verdict = decidePermission(e);
      return { answer: verdict.answer, usedApproval: verdict.reason === 'approved' };
    },
  },
  { name: 'approval-everywhere', decide: () => ({ answer: 'escalate', usedApproval: false }) },
  {
    name: 'static-risk',
    decide: (e) => ({ answer: STATIC_RISKY.has(e.kind) ? 'escalate' : 'allow', usedApproval: false }),
  },
];

export interface OracleCount {
  policy: string;
  cases: number;
  interrupted: number;
  /** Interrupted where the oracle says no person was needed. */
  falseEscalations: number;
  /** Not interrupted where the oracle says a person was needed. */
  missed: number;
  /** Acted on an approval that was expired, revoked, or bound to a world that moved. */
  staleApprovals: number;
  /** The cases that went wrong, by name. */
  wrong: string[];
}

/** Runs `policy` on every case and counts against the oracle. */
export function scorePolicy(policy: AttentionPolicy, cases: readonly AttentionCase[] = ATTENTION_CASES): OracleCount {
  const count: OracleCount = {
    policy: policy.name,
    cases: cases.length,
    interrupted: 0,
    falseEscalations: 0,
    missed: 0,
    staleApprovals: 0,
    wrong: [],
  };
  for (const c of cases) {
    const { answer, usedApproval } = policy.decide(c.evidence);
    const interrupted = answer === 'escalate';
    const e = c.evidence;
    const stale = usedApproval && (e.approval?.status !== 'current' || e.world.bound !== e.world.current);
    if (interrupted) count.interrupted++;
    if (interrupted && !c.interrupt) count.falseEscalations++;
    if (!interrupted && c.interrupt) count.missed++;
    if (stale) count.staleApprovals++;
    if (interrupted !== c.interrupt || stale) count.wrong.push(c.name);
  }
  return count;
}

/** The three policies on the twelve cases. */
export function runAttentionOracle(): OracleCount[] {
  return ATTENTION_POLICIES.map((policy) => scorePolicy(policy));
}

/** One line for the demo: each policy's counts, computed now. */
export function attentionOracleLine(counts: OracleCount[] = runAttentionOracle()): string {
  const part = (c: OracleCount) =>
    `${c.policy} ${c.interrupted}/${c.cases} interrupted, ${c.falseEscalations} false, ${c.missed} missed, ${c.staleApprovals} stale`;
  return `attention oracle: ${counts.map(part).join('; ')}`;
}
