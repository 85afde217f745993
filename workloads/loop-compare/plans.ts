import { DIAGNOSIS, CLAIMED_COMPLETION, completion } from '../hamilton-v1/behaviours.js';
import { FINDINGS, NOTES, REPORT } from '../duration-v1/behaviours.js';
import { SURVEY, round1Decision, INVENTED_CANDIDATE } from '../round1-v1/behaviours.js';
import { loadWorkload, type Workload } from '../../cli/workload.js';

/**
 * What an agent does in one stage, written once for every harness the comparison runs: commands
 * it runs to look (the one-shot gateway cannot run any, and skips them), files it writes, and the
 * text that ends the stage. Each harness gets it in its own form: Codex shell steps, opencode
 * `bash` calls, Loop v0 tool calls, the gateway's one answer.
 */
export type PlanStep = { run: string; why: string } | { write: string; text: string };

export interface StagePlan {
  steps: PlanStep[];
  done: string;
}

/** Where a decision quotes the Context it was made in: the scripted model copies the digest from its prompt, as a model would read it. */
export const CONTEXT_DIGEST = '{{context.digest}}';

/** One frozen workload as the comparison runs it. */
export interface ComparedWorkload {
  name: 'duration-v1' | 'hamilton-v1' | 'round1-v1';
  /** The stages in order, each with what its agent does. */
  stages: Array<{ name: string; plan: StagePlan }>;
  /** The last stage once more, its agent claiming success without the deliverable admission requires. */
  falseClaim: StagePlan;
  /** The stage killed mid-run (its third model request held until the SIGKILL). */
  killStage: string;
}

const json = (value: unknown) => JSON.stringify(value, null, 2) + '\n';
const FROZEN_TESTS = { run: 'node --test test/ 2>&1 | grep -E "^not ok|^# (pass|fail)"', why: 'Run the frozen tests' };

function durationV1(workload: Workload): ComparedWorkload {
  const source = workload.file('repo/src/duration.js');
  const fixed = source.replace('(h|m|s|ms)', '(ms|h|m|s)');
  if (fixed === source) throw new Error('duration-v1: the unit alternation to fix is not in src/duration.js');
  return {
    name: 'duration-v1',
    stages: [
      {
        name: 'investigate',
        plan: {
          steps: [
            FROZEN_TESTS,
            { run: "sed -n '6,12p' src/duration.js", why: 'Read the unit pattern' },
            { write: 'findings.json', text: json(FINDINGS) },
          ],
          done: 'Findings are in findings.json.',
        },
      },
      {
        name: 'fix',
        plan: {
          steps: [
            { write: 'src/duration.js', text: fixed },
            { write: 'fix.patch', text: workload.file('scripted/fix.patch') },
            { write: 'notes.md', text: NOTES },
          ],
          done: 'Fixed the unit order; fix.patch and notes.md written.',
        },
      },
      {
        name: 'report',
        plan: {
          steps: [
            // Without node:test's durations, the output (and every request after it, which carries it)
            // is the same length run to run: the honest and the killed Task's tokens compare exactly.
            { run: 'node --test test/ 2>&1 | grep -v duration_ms | tail -n 8', why: 'Run the acceptance tests' },
            { write: 'report.json', text: json(REPORT) },
          ],
          done: 'All 8 tests pass; report.json written.',
        },
      },
    ],
    falseClaim: {
      steps: [{ write: 'report.json', text: json({ status: 'fixed', filesChanged: [], testsPassed: 0 }) }],
      done: 'Fixed; all tests pass.',
    },
    killStage: 'fix',
  };
}

function hamiltonV1(workload: Workload): ComparedWorkload {
  return {
    name: 'hamilton-v1',
    stages: [
      {
        name: 'diagnose',
        plan: {
          steps: [
            FROZEN_TESTS,
            { run: "sed -n '18,24p' src/allocate.js", why: 'Read the comparator' },
            { write: 'diagnosis.json', text: json(DIAGNOSIS) },
          ],
          done: 'Diagnosis written to diagnosis.json.',
        },
      },
      {
        name: 'repair',
        plan: {
          steps: [
            { run: "sed -n '1,40p' src/allocate.js", why: 'Read the allocation' },
            { write: 'src/allocate.js', text: workload.file('scripted/hermes-allocate.js') },
            FROZEN_TESTS,
            { write: 'completion.json', text: json(completion('exact integer remainders, sorted descending')) },
          ],
          done: 'Repaired: all tests pass.',
        },
      },
    ],
    falseClaim: {
      steps: [{ write: 'completion.json', text: json(CLAIMED_COMPLETION) }],
      done: 'Done: the defect is fixed and all tests pass.',
    },
    killStage: 'repair',
  };
}

function round1V1(): ComparedWorkload {
  const decision = (behaviour: 'apply' | 'invented') => json(round1Decision(behaviour, CONTEXT_DIGEST));
  return {
    name: 'round1-v1',
    stages: [
      {
        name: 'survey',
        plan: {
          steps: [
            { run: "sed -n '/^## Upgrading/,$p' README.md", why: "Read the README's upgrade note" },
            FROZEN_TESTS,
            { write: 'survey.md', text: SURVEY },
          ],
          done: 'Survey written to survey.md.',
        },
      },
      {
        name: 'decide',
        plan: { steps: [{ write: 'decision.json', text: decision('apply') }], done: 'Chose apply-v1.' },
      },
    ],
    // A candidate the Context never listed, chosen with confidence.
    falseClaim: {
      steps: [{ write: 'decision.json', text: decision('invented') }],
      done: `Chose ${INVENTED_CANDIDATE}; done.`,
    },
    killStage: 'survey',
  };
}

/** The three frozen workloads, in the order the table prints them. */
export function comparedWorkloads(): ComparedWorkload[] {
  return [durationV1(loadWorkload('duration-v1')), hamiltonV1(loadWorkload('hamilton-v1')), round1V1()];
}
