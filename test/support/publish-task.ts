import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gitEffectAdapter, type GitEffectAdapter } from '../../adapters/index.js';
import type { HarnessConfig } from '../../frontier/harness-config.js';
import type { TaskSpecInput } from '../../objects/index.js';
import { agent } from './decision-task.js';
import { tempDir } from './temp.js';

/**
 * A Task whose `review` stage decides whether its workspace is published to a git remote: the
 * candidate `publish` is an Effect through the adapter registered as `origin` (the git adapter),
 * `hold` publishes nothing. Both rest on the untrusted review note in the workspace, and the stage
 * asks a person (`untrustedAuthority: "ask"`): nothing is published before that answer is admitted.
 */

/** The branch the Task publishes to. */
export const BRANCH = 'review/accepted';
/** The publish candidate's input: its commit message, and the files left out of the published tree. */
export const PUBLISH_INPUT = { message: 'Publish the reviewed change', exclude: ['choice.json', 'REVIEW.md'] };

/** A seed: the change under review and the review note (the diff and what verified it). */
export function publishSeed(): string {
  // A folder inside the temp directory: mkdtemp's own mode (0700) would be the workspace's, which the confined agent cannot enter.
  const dir = join(tempDir('ordivon-publish-'), 'seed');
  mkdirSync(dir);
  writeFileSync(join(dir, 'README.md'), '# Parser\n');
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src', 'parse.js'), 'export const parse = (s) => JSON.parse(s);\n');
  writeFileSync(join(dir, 'REVIEW.md'), '# Review\nThe diff adds src/parse.js; its tests pass.\n');
  return dir;
}

/** The spec; `taskId` fixes the Task's id, `seed` the seed directory (default a fresh `publishSeed()`). */
export function publishSpec(taskId?: string, seed = publishSeed()): TaskSpecInput {
  return {
    ...(taskId !== undefined ? { taskId } : {}),
    title: 'Review, then publish',
    goal: 'Publish the reviewed change to the remote branch once a person admits it.',
    workspaceSeed: seed,
    sources: [{ id: 'review', path: 'REVIEW.md', description: 'the diff and its verification' }],
    requiredArtifacts: [{ name: 'choice.json', kind: 'json', schema: 'decision' }],
    stages: [
      {
        name: 'review',
        produces: ['choice.json'],
        decision: {
          artifact: 'choice.json',
          untrustedAuthority: 'ask',
          candidates: [
            {
              id: 'publish',
              summary: `publish the workspace to ${BRANCH}`,
              supportedBy: ['review'],
              action: {
                kind: 'effect',
                adapter: 'origin',
                operation: 'publish',
                target: BRANCH,
                input: PUBLISH_INPUT,
                reconcile: 'host',
              },
            },
            { id: 'hold', summary: 'publish nothing', supportedBy: ['review'], action: { kind: 'none' } },
          ],
        },
      },
    ],
  };
}

/** Harnesses `pick-publish` and `pick-hold`: a command agent choosing that candidate. */
export const PUBLISH_HARNESSES: Record<string, HarnessConfig> = {
  'pick-publish': agent('choose', 'publish'),
  'pick-hold': agent('choose', 'hold'),
};

/** The git adapter on `remote`, publishing the Task Attempt's workspace under the state root `state`. */
export function originAdapter(state: string, remote: string, timeoutMs?: number): GitEffectAdapter {
  return gitEffectAdapter({
    remote,
    workspace: ({ taskId, attempt }) => join(state, 'workspaces', taskId, `attempt-${attempt}`),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
  });
}
