import type { TaskSpecInput } from '../../objects/index.js';
import type { Workload } from '../../cli/workload.js';
import { DEFECTS, DEFECTS_REPO } from './kit.js';

/** What `--only` takes: the two parts of the demo. */
export const BRANCH_JOIN_PARTS = ['best-of-three', 'fan-out'] as const;
export type BranchJoinPart = (typeof BRANCH_JOIN_PARTS)[number];

/** The Tasks each part drove: the parent's id. */
export type DrivenTasks = Partial<Record<BranchJoinPart, string>>;

/** The three harnesses of the duration fix's parallel Attempts, in the order the children are listed. */
export const ATTEMPTS = ['wrong', 'right', 'hang'] as const;

/**
 * duration-v1 as it is (its seed repo, stages and acceptance), its `fix` stage run as three
 * parallel Attempts, the first verified winning; each Attempt is told the parent's findings.json
 * as the parent's Context shows it.
 */
export function bestOfThreeSpec(duration: Workload, taskId: string): TaskSpecInput {
  const stages = duration.spec.stages!.map((stage) =>
    stage.name === 'fix'
      ? {
          ...stage,
          parallel: [...ATTEMPTS],
          join: 'first_verified' as const,
        }
      : stage,
  );
  return { ...duration.spec, taskId, stages, labels: { ...duration.spec.labels, demo: 'branch-join' } };
}

/**
 * The small repo's three defects: `list` writes defects.json and review-request.json; `fix` fans
 * out one child per defect (each its own Task: the defect's goal, fixes/<defect>.md, its own test
 * as acceptance), joined `all`; `review` fans out one reviewer child, a Task of another spec, over
 * review-request.json, in a workspace seeded from the joined change; it writes review.md. The
 * parent's acceptance runs every defect's test.
 */
export function fanOutSpec(taskId: string): TaskSpecInput {
  const node = process.execPath;
  return {
    taskId,
    title: 'Fix each defect of small-utils, then review the joined change',
    goal: 'small-utils has several independent defects. List them, fix each in a child Task of its own, then have the joined change reviewed.',
    requiredArtifacts: [
      { name: 'defects.json', kind: 'json', schema: { type: 'array', minItems: 1, items: { type: 'string' } } },
      { name: 'review-request.json', kind: 'json', schema: { type: 'array', minItems: 1, items: { type: 'string' } } },
      { name: 'review.md', kind: 'text', pattern: '^# Review', maxBytes: 4000 },
    ],
    stages: [
      {
        name: 'list',
        purpose: 'list the defects',
        instructions:
          'Run the tests; write the names of the defective helpers to defects.json and what to review to review-request.json.',
        produces: ['defects.json', 'review-request.json'],
      },
      {
        name: 'fix',
        purpose: 'fix each defect in a child Task',
        fanOut: {
          from: 'defects.json',
          join: 'all',
          spec: {
            title: 'Fix the {{item}} defect of small-utils',
            goal: 'DEFECT={{item}}: src/{{item}}.js fails test/{{item}}.test.js. Fix src/{{item}}.js without touching test/, and say what was wrong in fixes/{{item}}.md.',
            requiredArtifacts: [{ name: 'fixes/{{item}}.md', kind: 'text', pattern: '^# ', maxBytes: 4000 }],
            acceptance: {
              command: node,
              args: ['--test', 'test/{{item}}.test.js'],
              frozenTests: ['test/{{item}}.test.js'],
            },
            labels: { role: 'fixer' },
          },
        },
      },
      {
        name: 'review',
        purpose: 'review the joined change',
        produces: ['review.md'],
        proposesCompletion: true,
        fanOut: {
          from: 'review-request.json',
          join: 'all',
          spec: {
            title: 'Review the {{item}} of small-utils',
            goal: 'REVIEW={{item}}: read the change in the workspace, run the tests, and write review.md with your verdict.',
            requiredArtifacts: [{ name: 'review.md', kind: 'text', pattern: '^# Review', maxBytes: 4000 }],
            acceptance: { command: node, args: ['--test', 'test/'] },
            labels: { role: 'reviewer' },
          },
        },
      },
    ],
    result: 'review.md',
    workspaceSeed: DEFECTS_REPO,
    acceptance: {
      command: node,
      args: ['--test', 'test/'],
      frozenTests: DEFECTS.map((d) => `test/${d}.test.js`),
      timeoutMs: 120_000,
    },
    labels: { demo: 'branch-join' },
  };
}
