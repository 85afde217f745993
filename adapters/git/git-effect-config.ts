import { z } from 'zod';

/** The Task Attempt an Effect's request id (`<task>/a<attempt>/g<generation>/effect`) names. */
export interface GitWorkspaceRequest {
  readonly requestId: string;
  readonly taskId: string;
  readonly attempt: number;
  readonly generation: number;
}

/** The configuration of `gitEffectAdapter`: one remote; the branch is each intent's `target`. */
export interface GitEffectAdapterConfig {
  /** What `git push` and `git ls-remote` take: a URL (`git://`, `https://`, `ssh://`) or a path. */
  readonly remote: string;
  /** The endpoint recorded in each intent and observed as its identity (default `remote`). */
  readonly endpoint?: string;
  /**
   * The directory whose files are the published commit's tree: for a Host's Task, its Attempt's
   * workspace (`<state>/workspaces/<taskId>/attempt-<attempt>`). Called by `perform` only.
   */
  readonly workspace: (at: GitWorkspaceRequest) => string | Promise<string>;
  /** Paths (gitignore patterns) left out of every tree, besides the input's (default `DEFAULT_GIT_EXCLUDE`). */
  readonly exclude?: readonly string[];
  /** The commit's author and committer (default `Ordivon Host <host@ordivon.invalid>`). */
  readonly author?: { readonly name: string; readonly email: string };
  /** How long one git command may run; a push past it is `git_effect_no_answer` (default 120000). */
  readonly timeoutMs?: number;
  /** How many commits of the branch, from its head, a lookup searches for the request's commit (default 100). */
  readonly lookupDepth?: number;
  /** Variables added to git's otherwise clean environment (credentials: `GIT_SSH_COMMAND`, `SSH_AUTH_SOCK`). */
  readonly env?: Readonly<Record<string, string>>;
}

/** What the source digest leaves out of a workspace besides `.git` (which git never adds). */
export const DEFAULT_GIT_EXCLUDE: readonly string[] = ['node_modules/', '__pycache__/', '.pytest_cache/', '.ordivon/'];

/** The config's data fields, parsed when the adapter is made (the function is typed, not parsed). */
export const GitEffectConfigData = z.object({
  remote: z.string().min(1),
  endpoint: z.string().min(1).optional(),
  workspace: z.custom<GitEffectAdapterConfig['workspace']>((v) => typeof v === 'function', 'expected a function'),
  exclude: z.array(z.string().min(1)).optional(),
  author: z.strictObject({ name: z.string().min(1), email: z.string().min(1) }).optional(),
  timeoutMs: z.number().int().positive().optional(),
  lookupDepth: z.number().int().min(1).max(10_000).optional(),
  env: z.record(z.string(), z.string()).optional(),
});

/** A `publish` intent's input: the commit message's subject and body, and paths left out of the tree. */
export const GitPublishInput = z.strictObject({
  message: z.string().min(1).max(65_536).optional(),
  exclude: z.array(z.string().min(1)).max(1000).optional(),
});
export type GitPublishInput = z.infer<typeof GitPublishInput>;

/** The one operation the adapter performs. */
export const GIT_PUBLISH = 'publish';

/** What `perform` resolves with and `lookup` finds: the published commit, as the remote holds it. */
export interface GitPublishReceipt {
  remote: string;
  branch: string;
  commit: string;
  /** The branch's head the commit was made on (the intent's expected old value); null: a new branch. */
  parent: string | null;
  tree: string;
  requestId: string;
  /** `digestOf(input)`, from the commit's `Ordivon-Input-Digest` trailer. */
  inputDigest: string;
}
