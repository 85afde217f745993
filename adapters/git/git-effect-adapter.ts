import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { zodIssue } from '../../base/index.js';
import type { EffectTarget } from '../../frontier/index.js';
import { digestOf } from '../../store/index.js';
import { cleanGitEnv, runGit, type GitOutcome } from './git-command.js';
import {
  DEFAULT_GIT_EXCLUDE,
  GIT_PUBLISH,
  GitEffectConfigData,
  GitPublishInput,
  type GitEffectAdapterConfig,
  type GitPublishReceipt,
  type GitWorkspaceRequest,
} from './git-effect-config.js';
import { GitEffectError, gitNotPerformed, type GitEffectCode } from './git-effect-error.js';

/** What `observe` reads: the remote as the endpoint, the branch's head as the target's version. */
export interface GitEffectObservation {
  endpointIdentity: string;
  /** The branch's head commit; null when the branch does not exist. */
  targetVersion: string | null;
  capabilities: { idempotency: 'key'; lookup: true; lookupWindowMs: null };
}

/**
 * An Effect adapter publishing a Task's workspace as a commit on a branch of a git remote
 * (docs/publication.md): the intent's `operation` is `publish`, its `target` the branch.
 */
export interface GitEffectAdapter {
  readonly endpoint: string;
  /**
   * Makes the workspace's tree one commit on the branch's expected head (`intent.targetVersion`,
   * which the Host passes from the observation the intent records; read with ls-remote when
   * absent) and pushes it once, with that head as the push's lease. The commit is deterministic:
   * the same request, input, workspace and head always give the same commit id. Rejects with a
   * `GitEffectError`: `git_effect_no_answer` when the push may have updated the branch; a code
   * `notPerformed` holds for when nothing was pushed.
   */
  perform(requestId: string, input: Record<string, unknown>, intent: EffectTarget): Promise<GitPublishReceipt>;
  /**
   * The commits among the branch's last `lookupDepth` whose `Ordivon-Request` trailer names
   * `requestId`, as receipts; none when the branch does not exist. Changes nothing; a failure is
   * `git_effect_lookup_failed` (retryable).
   */
  lookup(requestId: string, intent: EffectTarget): Promise<GitPublishReceipt[]>;
  notPerformed(error: unknown): boolean;
  /** The remote and the branch's head now (`git ls-remote`); changes nothing. */
  observe(intent: EffectTarget): Promise<GitEffectObservation>;
  receiptInputDigest(receipt: unknown): string | undefined;
}

const REQUEST_ID = /^(.+)\/a([1-9]\d*)\/g([1-9]\d*)\/effect$/;
/** The date of a commit on a new branch (no parent to take it from): 2000-01-01T00:00:00Z. */
const NEW_BRANCH_DATE = '946684800 +0000';
const DEFAULT_AUTHOR = { name: 'Ordivon Host', email: 'host@ordivon.invalid' };

/** A config as the adapter uses it: every default filled in. */
interface Settings {
  remote: string;
  endpoint: string;
  workspace: GitEffectAdapterConfig['workspace'];
  exclude: readonly string[];
  author: { name: string; email: string };
  timeoutMs: number;
  lookupDepth: number;
  env: Readonly<Record<string, string>>;
}

/**
 * The adapter for `config`'s remote. Throws `git_effect_config_invalid` (with `path`) when the
 * config does not parse.
 */
export function gitEffectAdapter(config: GitEffectAdapterConfig): GitEffectAdapter {
  const data = GitEffectConfigData.safeParse(config);
  if (!data.success) {
    const issue = zodIssue('git_effect_config_invalid', data.error);
    throw new GitEffectError(issue.code, issue.message, { path: issue.path });
  }
  const settings: Settings = {
    remote: config.remote,
    endpoint: config.endpoint ?? config.remote,
    workspace: config.workspace,
    exclude: config.exclude ?? DEFAULT_GIT_EXCLUDE,
    author: config.author ?? DEFAULT_AUTHOR,
    timeoutMs: config.timeoutMs ?? 120_000,
    lookupDepth: config.lookupDepth ?? 100,
    env: config.env ?? {},
  };
  return {
    endpoint: settings.endpoint,
    perform: (requestId, input, intent) => publish(settings, requestId, input, intent),
    lookup: (requestId, intent) => lookUp(settings, requestId, intent),
    notPerformed: gitNotPerformed,
    observe: async (intent) => ({
      endpointIdentity: settings.endpoint,
      targetVersion: await withScratch(settings, (git) =>
        headOf(git, settings, branchOf(intent), 'git_effect_lookup_failed'),
      ),
      capabilities: { idempotency: 'key', lookup: true, lookupWindowMs: null },
    }),
    receiptInputDigest: (receipt) => {
      const digest = (receipt as { inputDigest?: unknown } | null)?.inputDigest;
      return typeof digest === 'string' ? digest : undefined;
    },
  };
}

/** git in one scratch directory (its own HOME and bare repository `repo.git`), removed afterwards. */
type Git = (
  args: readonly string[],
  options?: { cwd?: string; input?: string; env?: Record<string, string> },
) => Promise<GitOutcome>;

async function withScratch<T>(settings: Settings, fn: (git: Git, scratch: string) => Promise<T>): Promise<T> {
  const scratch = await mkdtemp(join(tmpdir(), 'ordivon-git-'));
  const env = cleanGitEnv(scratch, settings.env);
  const git: Git = (args, options = {}) =>
    runGit(args, {
      env: { ...env, ...options.env },
      timeoutMs: settings.timeoutMs,
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      ...(options.input !== undefined ? { input: options.input } : {}),
    });
  try {
    const init = await git(['init', '--bare', '-q', join(scratch, 'repo.git')]);
    if (init.exitCode !== 0) throw new Error(`git init failed: ${init.stderr.trim() || init.message}`);
    return await fn(git, scratch);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** The intent's branch, checked: `git_effect_operation_unknown` for another operation, `git_effect_invalid_input` for a bad name. */
function branchOf(intent: EffectTarget): string {
  if (intent.operation !== GIT_PUBLISH)
    throw new GitEffectError(
      'git_effect_operation_unknown',
      `no operation ${intent.operation} (the git adapter performs publish); nothing was pushed`,
    );
  const branch = intent.target;
  // git check-ref-format's rules for a branch name, checked here so no git runs for a bad one.
  const bad =
    branch === '' ||
    branch.startsWith('-') ||
    branch.startsWith('/') ||
    branch.endsWith('/') ||
    branch.endsWith('.') ||
    branch.endsWith('.lock') ||
    branch.includes('..') ||
    branch.includes('//') ||
    branch.includes('@{') ||
    branch === '@' ||
    /[\x00-\x20\x7f~^:?*[\\]/.test(branch) ||
    branch.split('/').some((part) => part.startsWith('.') || part.endsWith('.lock'));
  if (bad)
    throw new GitEffectError(
      'git_effect_invalid_input',
      `${JSON.stringify(branch)} is not a valid branch name; nothing was pushed`,
      {
        path: 'target',
      },
    );
  return branch;
}

/** The branch's head on the remote now (null: absent); a failure is `code`. */
async function headOf(git: Git, settings: Settings, branch: string, code: GitEffectCode): Promise<string | null> {
  const ref = `refs/heads/${branch}`;
  const r = await git(['ls-remote', '--refs', settings.remote, ref]);
  if (r.exitCode !== 0)
    throw new GitEffectError(code, `git ls-remote ${settings.remote} ${ref} failed: ${failure(r)}${unsent(code)}`, {
      stderr: r.stderr,
    });
  const line = r.stdout.split('\n').find((l) => l.endsWith(`\t${ref}`));
  return line === undefined ? null : line.split('\t')[0]!;
}

const failure = (r: GitOutcome) => (r.timedOut ? 'timed out' : r.stderr.trim() || r.message);
/** What a read failing in `perform` (before any push) adds to its message. */
const unsent = (code: GitEffectCode) => (code === 'git_effect_unreachable' ? '; nothing was pushed' : '');

/** The Task Attempt a request id names; `git_effect_invalid_input` when it names none. */
function attemptOf(requestId: string): GitWorkspaceRequest {
  const m = REQUEST_ID.exec(requestId);
  if (!m)
    throw new GitEffectError(
      'git_effect_invalid_input',
      `${requestId} is no Effect request id (<task>/a<attempt>/g<generation>/effect): no workspace to publish; nothing was pushed`,
    );
  return { requestId, taskId: m[1]!, attempt: Number(m[2]), generation: Number(m[3]) };
}

/** `perform`: the commit built in a scratch repository, then pushed once with the expected head as its lease. */
async function publish(
  settings: Settings,
  requestId: string,
  rawInput: Record<string, unknown>,
  intent: EffectTarget,
): Promise<GitPublishReceipt> {
  const branch = branchOf(intent);
  const parsed = GitPublishInput.safeParse(rawInput);
  if (!parsed.success) {
    const issue = zodIssue('git_effect_invalid_input', parsed.error);
    throw new GitEffectError(issue.code, `input ${issue.path}: ${issue.message}; nothing was pushed`, {
      path: issue.path,
    });
  }
  const input = parsed.data;
  const at = attemptOf(requestId);
  const workspace = await settings.workspace(at);
  const isDir = await stat(workspace).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isDir)
    throw new GitEffectError(
      'git_effect_invalid_input',
      `the workspace ${workspace} of ${requestId} is no directory; nothing was pushed`,
    );
  return withScratch(settings, async (git, scratch) => {
    const repo = join(scratch, 'repo.git');
    const current = await headOf(git, settings, branch, 'git_effect_unreachable');
    const expected = intent.targetVersion === undefined ? current : intent.targetVersion;
    if (current !== expected)
      throw new GitEffectError(
        'git_effect_branch_moved',
        `${branch} on ${settings.remote} is at ${current ?? 'nothing (absent)'}, the intent expects ${expected ?? 'it absent'}; nothing was pushed`,
      );
    const parentDate = expected === null ? NEW_BRANCH_DATE : await fetchParent(git, settings, repo, branch, expected);
    const tree = await treeOf(git, settings, repo, scratch, workspace, input);
    const inputDigest = digestOf(rawInput);
    const message = [
      input.message ?? `Publish the work of Ordivon task ${at.taskId}`,
      '',
      `Ordivon-Task: ${at.taskId}`,
      `Ordivon-Request: ${requestId}`,
      `Ordivon-Input-Digest: ${inputDigest}`,
      '',
    ].join('\n');
    const who = settings.author;
    const made = await git(
      ['--git-dir', repo, 'commit-tree', tree, ...(expected === null ? [] : ['-p', expected]), '-F', '-'],
      {
        input: message,
        env: {
          GIT_AUTHOR_NAME: who.name,
          GIT_AUTHOR_EMAIL: who.email,
          GIT_AUTHOR_DATE: parentDate,
          GIT_COMMITTER_NAME: who.name,
          GIT_COMMITTER_EMAIL: who.email,
          GIT_COMMITTER_DATE: parentDate,
        },
      },
    );
    if (made.exitCode !== 0)
      throw new GitEffectError(
        'git_effect_invalid_input',
        `git commit-tree failed: ${failure(made)}; nothing was pushed`,
      );
    const commit = made.stdout.trim();
    await pushOnce(git, settings, repo, branch, commit, expected);
    return { remote: settings.remote, branch, commit, parent: expected, tree, requestId, inputDigest };
  });
}

/** Fetches the branch's last `depth` commits into `repo` as `into`; `code` (with git's message) when the fetch fails. */
async function fetchBranch(
  git: Git,
  settings: Settings,
  at: { repo: string; branch: string; depth: number; into: string },
  code: GitEffectCode,
): Promise<void> {
  const refspec = `+refs/heads/${at.branch}:${at.into}`;
  const fetched = await git([
    '--git-dir',
    at.repo,
    'fetch',
    '-q',
    '--no-tags',
    `--depth=${at.depth}`,
    settings.remote,
    refspec,
  ]);
  if (fetched.exitCode !== 0)
    throw new GitEffectError(
      code,
      `git fetch ${settings.remote} ${at.branch} failed: ${failure(fetched)}${unsent(code)}`,
      { stderr: fetched.stderr },
    );
}

/** Fetches the expected head (depth 1) into the scratch repository; returns its committer date, the new commit's. */
async function fetchParent(
  git: Git,
  settings: Settings,
  repo: string,
  branch: string,
  expected: string,
): Promise<string> {
  await fetchBranch(git, settings, { repo, branch, depth: 1, into: 'refs/ordivon/parent' }, 'git_effect_unreachable');
  const got = await git(['--git-dir', repo, 'show', '-s', '--format=%H %ct', 'refs/ordivon/parent']);
  const [sha, seconds] = got.stdout.trim().split(' ');
  if (sha !== expected)
    throw new GitEffectError(
      'git_effect_branch_moved',
      `${branch} on ${settings.remote} moved to ${sha ?? 'nothing'} while being read, the intent expects ${expected}; nothing was pushed`,
    );
  return `${seconds} +0000`;
}

/** The workspace's files (its .gitignore rules, the config's and the input's exclusions applied) as a tree in `repo`. */
async function treeOf(
  git: Git,
  settings: Settings,
  repo: string,
  scratch: string,
  workspace: string,
  input: GitPublishInput,
): Promise<string> {
  await writeFile(join(repo, 'info', 'exclude'), [...settings.exclude, ...(input.exclude ?? [])].join('\n') + '\n');
  const env = { GIT_INDEX_FILE: join(scratch, 'index') };
  const base = ['--git-dir', repo, '--work-tree', workspace, '-c', 'core.bare=false'];
  const added = await git([...base, 'add', '-A', '--', '.'], { cwd: workspace, env });
  if (added.exitCode !== 0)
    throw new GitEffectError(
      'git_effect_invalid_input',
      `reading the workspace ${workspace} failed: ${failure(added)}; nothing was pushed`,
    );
  const written = await git(['--git-dir', repo, 'write-tree'], { env });
  if (written.exitCode !== 0)
    throw new GitEffectError(
      'git_effect_invalid_input',
      `git write-tree failed: ${failure(written)}; nothing was pushed`,
    );
  return written.stdout.trim();
}

/** git's words for a remote it could not talk to at all (nothing was sent). */
const UNREACHABLE =
  /unable to connect|Connection refused|Could not resolve host|does not appear to be a git repository|repository .* not found/i;

/**
 * `git push --force-with-lease=refs/heads/<branch>:<expected> <remote> <commit>:refs/heads/<branch>`,
 * once: the remote's receive-pack updates the ref only if it is still at `expected` (absent, for
 * null). Its porcelain status line for the ref decides: updated, rejected (nothing pushed), or
 * none at all (an answer lost, unless git never reached the remote).
 */
async function pushOnce(
  git: Git,
  settings: Settings,
  repo: string,
  branch: string,
  commit: string,
  expected: string | null,
): Promise<void> {
  const ref = `refs/heads/${branch}`;
  const r = await git([
    '--git-dir',
    repo,
    'push',
    '--porcelain',
    '--no-verify',
    `--force-with-lease=${ref}:${expected ?? ''}`,
    settings.remote,
    `${commit}:${ref}`,
  ]);
  const status = r.stdout.split('\n').find((l) => l.includes(`:${ref}\t`));
  const lost = (why: string) =>
    new GitEffectError('git_effect_no_answer', `git push ${settings.remote} ${ref}: ${why}; it may have been pushed`, {
      stderr: r.stderr,
    });
  if (r.timedOut) throw lost(`no answer within ${settings.timeoutMs} ms`);
  if (status === undefined) {
    if (r.exitCode !== undefined && r.exitCode !== 0 && UNREACHABLE.test(r.stderr))
      throw new GitEffectError(
        'git_effect_unreachable',
        `git push ${settings.remote}: ${r.stderr.trim()}; nothing was pushed`,
        {
          stderr: r.stderr,
        },
      );
    throw lost(`no status line for the ref (${failure(r)})`);
  }
  const [flag, , summary = ''] = status.split('\t');
  if (flag === '!') {
    const moved = /stale info|fetch first|non-fast-forward|already exists/.test(summary);
    throw new GitEffectError(
      moved ? 'git_effect_branch_moved' : 'git_effect_refused',
      `git push ${settings.remote} ${ref} was rejected: ${summary}${r.stderr.trim() ? ` (${r.stderr.trim()})` : ''}; nothing was pushed`,
      { stderr: r.stderr },
    );
  }
  if (r.exitCode !== 0) throw lost(`status "${status}" with exit ${r.exitCode ?? 'none'} (${failure(r)})`);
}

/** `lookup`: the branch's last commits (a depth-limited fetch), those naming `requestId` in their trailer. */
async function lookUp(settings: Settings, requestId: string, intent: EffectTarget): Promise<GitPublishReceipt[]> {
  const branch = branchOf(intent);
  return withScratch(settings, async (git, scratch) => {
    const head = await headOf(git, settings, branch, 'git_effect_lookup_failed');
    if (head === null) return [];
    const repo = join(scratch, 'repo.git');
    // One commit deeper than searched, so the deepest commit searched still shows its parent.
    await fetchBranch(
      git,
      settings,
      { repo, branch, depth: settings.lookupDepth + 1, into: 'refs/ordivon/head' },
      'git_effect_lookup_failed',
    );
    const trailer = (key: string) => `%(trailers:key=${key},valueonly,separator=%x1d)`;
    const log = await git([
      '--git-dir',
      repo,
      'log',
      '--first-parent',
      `-n${settings.lookupDepth}`,
      `--format=%H%x1f%T%x1f%P%x1f${trailer('Ordivon-Request')}%x1f${trailer('Ordivon-Input-Digest')}%x1e`,
      'refs/ordivon/head',
    ]);
    if (log.exitCode !== 0)
      throw new GitEffectError('git_effect_lookup_failed', `git log of ${branch} failed: ${failure(log)}`, {
        stderr: log.stderr,
      });
    return log.stdout
      .split('\x1e')
      .map((record) => record.trim().split('\x1f'))
      .filter((fields) => fields.length === 5 && fields[3]!.split('\x1d').includes(requestId))
      .map(([commit, tree, parents, , digests]) => ({
        remote: settings.remote,
        branch,
        commit: commit!,
        parent: parents!.split(' ')[0] || null,
        tree: tree!,
        requestId,
        inputDigest: digests!.split('\x1d')[0] ?? '',
      }));
  });
}
