import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { CliError, EXIT } from '../cli-io.js';
import type { Supervisor } from '../../kernel/index.js';
import {
  acceptedOf,
  attemptWorkspace,
  checkWorkspace,
  git,
  gitRun,
  patchBetween,
  withTemp,
  type Accepted,
} from './work-back.js';

/** What `apply` made: one commit on one new branch. */
export interface Applied {
  repo: string;
  branch: string;
  commit: string;
  parent: string;
}

/** The repository around `dir` and its git directory; `not_a_repository` when there is none. */
async function repositoryAt(dir: string): Promise<{ top: string; gitDir: string }> {
  const r = await gitRun(['-C', dir, 'rev-parse', '--show-toplevel', '--absolute-git-dir']);
  if (r.exitCode !== 0) throw new CliError('not_a_repository', `${dir} is not in a git work tree: ${r.stderr.trim()}`);
  const [top, gitDir] = r.stdout.trim().split('\n');
  return { top: top!, gitDir: gitDir! };
}

/**
 * What can be refused before the Task is read: `usage` (exit 2) for a branch name git refuses,
 * `not_a_repository`, `branch_exists`, `repo_dirty` (a tracked file modified or staged; untracked
 * files are not looked at: nothing here touches the working tree).
 */
export async function checkRepository(repoArg: string | undefined, branch: string | undefined) {
  const repo = await repositoryAt(resolve(repoArg ?? '.'));
  if (branch !== undefined) {
    const valid = await gitRun(['check-ref-format', '--branch', branch]);
    if (valid.exitCode !== 0)
      throw new CliError('usage', `--branch: ${JSON.stringify(branch)} is not a valid branch name`, {
        exit: EXIT.usage,
        path: 'branch',
      });
    const exists = await gitRun(['-C', repo.top, 'rev-parse', '--verify', '--quiet', `refs/heads/${branch}`]);
    if (exists.exitCode === 0) throw new CliError('branch_exists', `branch ${branch} already exists in ${repo.top}`);
  }
  const status = await git(['--no-optional-locks', '-C', repo.top, 'status', '--porcelain', '--untracked-files=no']);
  if (status.trim() !== '')
    throw new CliError('repo_dirty', `${repo.top} has uncommitted changes to tracked files:\n${status.trimEnd()}`);
  return repo;
}

/**
 * Makes the accepted change one commit on a new branch of the repository, without touching its
 * current branch, index or working tree: HEAD's tree is read into a temporary index
 * (GIT_INDEX_FILE), the patch from HEAD's source tree to the workspace is applied to it
 * (`git apply --cached`), and `write-tree`, `commit-tree` and `branch` make the commit. HEAD's
 * tree must be the one the Task was seeded with: its files, checked out to a temporary directory,
 * must have the source digest the Task's first Context recorded for the workspace
 * (`repo_mismatch` otherwise). Refused also as `checkRepository` and `checkWorkspace` refuse.
 */
export async function applyAccepted(
  accepted: Accepted,
  repoArg: string | undefined,
  branchArg: string | undefined,
): Promise<Applied> {
  const branch = branchArg ?? `ordivon/${accepted.taskId}`;
  const { top, gitDir } = await checkRepository(repoArg, branch);
  const head = await gitRun(['-C', top, 'rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
  if (head.exitCode !== 0)
    throw new CliError('repo_mismatch', `${top} has no commit at HEAD; the Task's seed is not its tree`);
  const parent = head.stdout.trim();
  await checkWorkspace(accepted);
  const { sourceDigest } = await import('../../runtime/index.js');
  const commit = await withTemp(async (scratch) => {
    const checkedOut = join(scratch, 'head');
    await mkdir(checkedOut);
    const headIndex = { GIT_INDEX_FILE: join(scratch, 'index-head') };
    await git(['--git-dir', gitDir, 'read-tree', parent], { env: headIndex });
    await git(['--git-dir', gitDir, '--work-tree', checkedOut, 'checkout-index', '-a', `--prefix=${checkedOut}/`], {
      env: headIndex,
    });
    const headDigest = await sourceDigest(checkedOut, { exclude: accepted.exclude });
    if (headDigest !== accepted.seedDigest)
      throw new CliError(
        'repo_mismatch',
        `HEAD (${parent.slice(0, 12)}) of ${top} is not the tree task ${accepted.taskId} was seeded with: its source digest is ${headDigest}, the Task recorded ${accepted.seedDigest}`,
        { details: { bound: accepted.seedDigest, current: headDigest } },
      );
    const patch = await patchBetween(gitDir, checkedOut, accepted.workspace, accepted.exclude, scratch);
    const index = { GIT_INDEX_FILE: join(scratch, 'index-new') };
    await git(['--git-dir', gitDir, 'read-tree', parent], { env: index });
    if (patch !== '')
      await git(['--git-dir', gitDir, 'apply', '--cached', '--binary', '-'], { env: index, input: patch });
    const tree = (await git(['--git-dir', gitDir, 'write-tree'], { env: index })).trim();
    const message = [
      `Ordivon task ${accepted.taskId}: the accepted change`,
      '',
      `The workspace of attempt ${accepted.attempt}, as its outcome binds it (source ${accepted.sourceDigest}).`,
      '',
      `Ordivon-Task: ${accepted.taskId}`,
      `Ordivon-Outcome: ${accepted.outcomeDigest}`,
      '',
    ].join('\n');
    return (await git(['--git-dir', gitDir, 'commit-tree', tree, '-p', parent, '-F', '-'], { input: message })).trim();
  });
  await git(['-C', top, 'branch', '--no-track', branch, commit]);
  return { repo: top, branch, commit, parent };
}

/** Where the work is (the Attempt's workspace) and, with `--apply`, the commit made of it or why none was. */
export interface WorkBack {
  workspace: string;
  apply?: Applied | { error: { code: string; message: string } };
}

/** `run`'s part: the workspace of the Task's Attempt, and with `--apply` and a completed Task, `applyAccepted`. */
export async function workBack(
  sup: Supervisor,
  values: { state?: string | undefined; apply: boolean; repo?: string | undefined; branch?: string | undefined },
  taskId: string,
  completed: boolean,
): Promise<WorkBack> {
  const task = sup.getTask(taskId)!;
  const { resolveStateRoot } = await import('../../store/index.js');
  const root = resolveStateRoot(values.state);
  const workspace = await attemptWorkspace(root, taskId, task.context.attempt);
  if (!values.apply || !completed) return { workspace };
  try {
    const accepted = await acceptedOf(root, {
      taskId,
      state: task.state,
      outcomeDigest: task.context.outcome?.digest ?? null,
      spec: task.spec,
      events: sup.events(taskId),
      object: (digest) => sup.getObject(digest).body,
    });
    return { workspace, apply: await applyAccepted(accepted, values.repo, values.branch) };
  } catch (error) {
    if (error instanceof CliError) return { workspace, apply: { error: { code: error.code, message: error.message } } };
    throw error;
  }
}

/** The human line for an applied change. */
export function appliedText(applied: Applied): string {
  return `applied: commit ${applied.commit} on new branch ${applied.branch} of ${applied.repo} (parent ${applied.parent.slice(0, 12)})`;
}
