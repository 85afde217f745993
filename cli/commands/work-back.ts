import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { TaskStateName } from '../../machines/index.js';
import type { TaskSpec } from '../../objects/index.js';
import type { EventRecord } from '../../store/index.js';
import { CliError } from '../cli-io.js';
import { withReader } from './with-reader.js';

/**
 * What `diff`, `export`, `apply` and `run --apply` share: the accepted attempt of a completed
 * Task (its workspace, its seed, the digests the Task recorded for both) and the git plumbing
 * that turns two source trees into a patch. Heavy modules (store, runtime) are imported lazily.
 */

/** The outcome object's fields these commands read (objects/object-kinds.ts holds the full schema). */
const OutcomeFields = z.object({
  attempt: z.number().int().positive(),
  sourceDigest: z.string(),
  evidence: z.record(z.string(), z.string()),
});

/** The records of one Task, read from a state root or from a running Host. */
export interface TaskRecords {
  taskId: string;
  state: string;
  outcomeDigest: string | null;
  spec: TaskSpec;
  events: ReadonlyArray<Pick<EventRecord, 'type' | 'data' | 'disposition'> & { revision: number }>;
  object(digest: string): unknown;
}

/** A completed Task's accepted attempt. */
export interface Accepted {
  taskId: string;
  outcomeDigest: string;
  /** The source digest the Host computed when it accepted the attempt. */
  sourceDigest: string;
  attempt: number;
  /** Artifact name → digest, as the outcome binds them. */
  evidence: Record<string, string>;
  workspace: string;
  /** The directory the workspace was seeded from (the spec's `workspaceSeed`), or null: an empty workspace. */
  seed: string | null;
  /** The workspace's source digest as the first Context of the Task read it, before any provider ran. */
  seedDigest: string;
  /** What the source digest leaves out besides `JUNK_DIRS`: the required artifacts. */
  exclude: string[];
}

/** `<state>/workspaces/<taskId>/attempt-<n>`: where the Host keeps an Attempt's workspace (host/host.ts). */
export async function attemptWorkspace(stateRoot: string, taskId: string, attempt: number): Promise<string> {
  const { workspacePath } = await import('../../runtime/index.js');
  return workspacePath(join(stateRoot, 'workspaces'), taskId, attempt);
}

// Typed, and imported as a type only: no statechart loads for a string the compiler checks.
const COMPLETED: TaskStateName = 'completed';

/** The accepted attempt of `task`; `no_outcome` unless it completed with an outcome. */
export async function acceptedOf(stateRoot: string, task: TaskRecords): Promise<Accepted> {
  if (task.state !== COMPLETED || task.outcomeDigest === null)
    throw new CliError('no_outcome', `task ${task.taskId} is ${task.state}: it has no accepted outcome to give back`);
  const outcome = OutcomeFields.parse(task.object(task.outcomeDigest));
  return {
    taskId: task.taskId,
    outcomeDigest: task.outcomeDigest,
    sourceDigest: outcome.sourceDigest,
    attempt: outcome.attempt,
    evidence: outcome.evidence,
    workspace: await attemptWorkspace(stateRoot, task.taskId, outcome.attempt),
    seed: task.spec.workspaceSeed ?? null,
    seedDigest: seedDigestOf(task),
    exclude: task.spec.requiredArtifacts.map((a) => a.name),
  };
}

/** The `workspace` item of the Task's first admitted Context: compiled before any provider touched the seeded workspace. */
function seedDigestOf(task: TaskRecords): string {
  const first = task.events.find((e) => e.type === 'context.compile' && e.disposition.admitted);
  const digest = z.object({ contextDigest: z.string() }).safeParse(first?.data).data?.contextDigest;
  const items = digest
    ? z
        .object({ items: z.array(z.object({ sourceId: z.string(), digest: z.string() })) })
        .safeParse(task.object(digest)).data?.items
    : undefined;
  const seeded = items?.find((i) => i.sourceId === 'workspace')?.digest;
  if (seeded === undefined)
    throw new CliError('no_outcome', `task ${task.taskId} records no Context, so no digest of its seed`);
  return seeded;
}

/** The Task's records from a state root, read-only (works beside a running Host). */
export async function readTaskRecords<T>(
  state: string | undefined,
  taskId: string,
  fn: (root: string, task: TaskRecords, blob: (digest: string) => Buffer) => Promise<T>,
): Promise<T> {
  const { OBJECT_KINDS, TaskSpec } = await import('../../objects/index.js');
  return withReader(state, OBJECT_KINDS, async (store) => {
    const projection = store.projection(taskId);
    if (!projection) throw new CliError('task_not_found', `no task ${taskId}`);
    const context = (projection.snapshot as { context: { specDigest: string; outcome: { digest: string } | null } })
      .context;
    const records: TaskRecords = {
      taskId,
      state: projection.state,
      outcomeDigest: context.outcome?.digest ?? null,
      spec: TaskSpec.parse(store.getObject(context.specDigest, 'task-spec').body),
      events: [...store.stream(taskId)].map(({ revision, event }) => ({ revision, ...event })),
      object: (digest) => store.getObject(digest).body,
    };
    return fn(store.root, records, (digest) => store.getBlob(digest));
  });
}

/** The workspace's source digest now, computed as the Host did; `workspace_changed` when it is not the accepted one. */
export async function checkWorkspace(accepted: Accepted): Promise<void> {
  const { sourceDigest } = await import('../../runtime/index.js');
  const now = await sourceDigest(accepted.workspace, { exclude: accepted.exclude }).catch((error: Error) => {
    throw new CliError('workspace_changed', `the workspace ${accepted.workspace} cannot be read: ${error.message}`);
  });
  if (now !== accepted.sourceDigest)
    throw new CliError(
      'workspace_changed',
      `the workspace ${accepted.workspace} was changed after acceptance: its source digest is ${now}, the outcome binds ${accepted.sourceDigest}`,
      { details: { bound: accepted.sourceDigest, current: now } },
    );
}

/**
 * Runs `fn` with the seed's tree: the seed directory when its digest is still the one the Task
 * recorded (`seed_changed` otherwise), an empty directory for a Task without a seed.
 */
export async function withSeed<T>(accepted: Accepted, fn: (dir: string) => Promise<T>): Promise<T> {
  if (accepted.seed === null) return withTemp((dir) => fn(dir));
  const { sourceDigest } = await import('../../runtime/index.js');
  const now = await sourceDigest(accepted.seed, { exclude: accepted.exclude }).catch(() => 'unreadable');
  if (now !== accepted.seedDigest)
    throw new CliError(
      'seed_changed',
      `the seed ${accepted.seed} is not the tree the Task was seeded with: its source digest is ${now}, the Task recorded ${accepted.seedDigest}`,
      { details: { bound: accepted.seedDigest, current: now } },
    );
  return fn(accepted.seed);
}

/** A temporary directory, removed when `fn` settles. */
export async function withTemp<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'ordivon-work-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs git with `args` (never a shell), to its end: its exit code and output. */
export async function gitRun(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; input?: string } = {},
): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const { execa } = await import('execa');
  const r = await execa('git', args, {
    reject: false,
    stripFinalNewline: false,
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.env ? { env: options.env } : {}),
    ...(options.input !== undefined ? { input: options.input } : {}),
  });
  if (r.exitCode === undefined) throw new CliError('git_failed', `git ${args.join(' ')} could not run: ${r.message}`);
  return { exitCode: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr) };
}

/** `gitRun`, answering `git_failed` (naming the command and git's message) when git exits non-zero. */
export async function git(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; input?: string } = {},
): Promise<string> {
  const r = await gitRun(args, options);
  if (r.exitCode !== 0) throw new CliError('git_failed', `git ${args.join(' ')} failed: ${r.stderr.trim()}`);
  return r.stdout;
}

/**
 * Writes the source files of `dir` (the source digest's walk: `JUNK_DIRS` and `exclude` left out)
 * as a tree into the object database of `gitDir`, through a temporary index; returns the tree id.
 */
export async function treeOf(gitDir: string, dir: string, exclude: string[], index: string): Promise<string> {
  const { walkTree } = await import('../../runtime/tree-walk.js');
  const { entries } = await walkTree(dir, { exclude });
  const env = { GIT_INDEX_FILE: index };
  await git(['--git-dir', gitDir, 'read-tree', '--empty'], { env });
  if (entries.length > 0)
    await git(['--git-dir', gitDir, '--work-tree', dir, 'update-index', '--add', '-z', '--stdin'], {
      env,
      input: entries.map((e) => `${e.rel}\0`).join(''),
    });
  return (await git(['--git-dir', gitDir, 'write-tree'], { env })).trim();
}

/** The unified diff (binary-safe, `a/` and `b/` prefixes) from the source tree `from` to `to`, via git objects in `gitDir`. */
export async function patchBetween(
  gitDir: string,
  from: string,
  to: string,
  exclude: string[],
  scratch: string,
): Promise<string> {
  const a = await treeOf(gitDir, from, exclude, join(scratch, 'index-from'));
  const b = await treeOf(gitDir, to, exclude, join(scratch, 'index-to'));
  return git(['--git-dir', gitDir, 'diff-tree', '-r', '-p', '--binary', '--no-renames', a, b]);
}

/** The accepted change as a patch: the seed's tree to the workspace's, each checked against the digest the Task recorded. */
export async function acceptedPatch(accepted: Accepted): Promise<string> {
  await checkWorkspace(accepted);
  return withSeed(accepted, (seed) =>
    withTemp(async (scratch) => {
      const gitDir = join(scratch, 'objects.git');
      await git(['init', '--bare', '-q', gitDir]);
      return patchBetween(gitDir, seed, accepted.workspace, accepted.exclude, scratch);
    }),
  );
}
