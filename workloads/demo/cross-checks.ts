import type { Expectation, ScenarioReport } from './checks.js';
import type { ScenarioName } from './scenarios.js';

/** An expectation that compares scenarios: it can only be checked when every one it compares ran. */
interface CrossCheck {
  what: string;
  compares: readonly ScenarioName[];
  check(report: (name: ScenarioName) => ScenarioReport): { held: boolean; observed: unknown };
}

/** A cross-scenario expectation left unchecked because `--only` did not run every scenario it compares. */
export interface UncheckedExpectation {
  what: string;
  compares: ScenarioName[];
  missing: ScenarioName[];
}

const CROSS_CHECKS: readonly CrossCheck[] = [
  {
    what: 'the two orders end in two different source digests',
    compares: ['codex-first', 'hermes-first'],
    check(report) {
      const [a, b] = [report('codex-first').outcome?.sourceDigest, report('hermes-first').outcome?.sourceDigest];
      return { held: a !== undefined && b !== undefined && a !== b, observed: [a, b] };
    },
  },
];

/**
 * Expectations across scenarios (both orders accepted with two different source digests). Each is
 * checked only when every scenario it compares ran; the others are returned as `unchecked`, with
 * the scenarios that were missing, so a subset (`--only codex-first,F1`) is judged on what it ran.
 */
export function crossChecks(reports: ScenarioReport[]): {
  expectations: Expectation[];
  unchecked: UncheckedExpectation[];
} {
  const byName = new Map(reports.map((r) => [r.name, r]));
  const expectations: Expectation[] = [];
  const unchecked: UncheckedExpectation[] = [];
  for (const cross of CROSS_CHECKS) {
    const missing = cross.compares.filter((name) => !byName.has(name));
    if (missing.length > 0) {
      unchecked.push({ what: cross.what, compares: [...cross.compares], missing });
      continue;
    }
    const { held, observed } = cross.check((name) => byName.get(name)!);
    expectations.push({ scenario: 'demo', what: cross.what, held, observed: JSON.stringify(observed) });
  }
  return { expectations, unchecked };
}
