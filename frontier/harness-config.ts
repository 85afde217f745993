import { z, type ZodError } from 'zod';
import { issuePath, strictObject } from '../base/index.js';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import {
  DriverKind,
  DriverRunInput,
  EnvName,
  envValueMissing,
  LoopSettings,
  PermissionKind,
  type RunPolicy,
} from '../drivers/index.js';
import { HostError, type RunLimits } from '../kernel/index.js';
import { ConfinementLimits, ConfinementMode } from '../runtime/index.js';

/** A path a sandbox mounts: absolute, or relative to the configuration file's folder (`ordivon`) or the working directory (`openHost`). */
const ConfinedPath = z.string().min(1, 'must not be empty');

/**
 * How the Host answers a provider's approval / permission requests (Codex approvals, ACP
 * `session/request_permission`; docs/permissions.md): `route` decides each by its evidence
 * (`decidePermission`), `{ policy: 'route', forbid: [kinds] }` routes with kinds the Task's
 * authority forbids, and `accept` / `decline` answer every request alike for an embedder who
 * chooses that.
 */
export const ApprovalPolicy = z.union(
  [
    z.enum(['route', 'accept', 'decline']),
    z.strictObject({ policy: z.literal('route'), forbid: z.array(PermissionKind).optional() }),
  ],
  { error: "must be route, accept, decline or { policy: 'route', forbid: [kinds] }" },
);
export type ApprovalPolicy = z.infer<typeof ApprovalPolicy>;

/**
 * The policy when neither the harness nor the configuration names one: `route`, so a provider
 * does at once only what is private, reversible and inside its Attempt's workspace, is refused
 * what the Task forbids, and every other request is asked of a person after the run.
 */
export const DEFAULT_APPROVALS: ApprovalPolicy = 'route';

/** The run's policy of a configured one, before the Host adds the Task's grants. */
export function runApprovals(policy: ApprovalPolicy): Pick<RunPolicy, 'approvals' | 'forbid'> {
  return typeof policy === 'string'
    ? { approvals: policy, forbid: [] }
    : { approvals: 'route', forbid: policy.forbid ?? [] };
}

/**
 * How to launch one harness: which driver speaks to it, the process to start, and what its
 * environment holds. The provider gets exactly `env` plus the `envFrom` variables, nothing
 * inherited. `envFrom` names variables whose values are read where the provider is spawned (the
 * driver pool's worker), so only their names are ever stored.
 */
export const HarnessConfig = strictObject({
  driver: z.enum(DriverKind.options, { error: `must be one of ${DriverKind.options.join(', ')}` }),
  /** The executable to start; required for every driver but `loop`, which starts none. */
  command: z.string().min(1, 'must not be empty').optional(),
  args: z.array(z.string()).optional(),
  env: z.record(EnvName, z.string()).optional(),
  envFrom: z.array(EnvName).optional(),
  model: z.string().min(1, 'must not be empty').optional(),
  timeoutMs: z
    .number()
    .int()
    .positive()
    .max(7 * 24 * 3600 * 1000)
    .optional(),
  /**
   * When set, a run is also ended (`heartbeat_timeout`) once this long passes without progress from
   * the agent: any output (command), a protocol message (ACP, Codex). Absent: only `timeoutMs`.
   */
  heartbeatMs: z.number().int().positive().optional(),
  approvals: ApprovalPolicy.optional(),
  /**
   * ACP only: offer the agent the client's file system (`fs/read_text_file`, `fs/write_text_file`,
   * default true). An agent that cannot create a file through it (Gemini CLI) writes itself when false.
   */
  clientFs: z.boolean().optional(),
  /** Codex only: the sandbox of its tool commands (default `workspace-write`; see DriverRunInput.sandbox). */
  sandbox: DriverRunInput.shape.sandbox,
  /**
   * The network of the confined provider process: `host` (default: it must reach its model) or
   * `none`, a network namespace of its own with nothing in it but its own loopback.
   */
  network: z.enum(['host', 'none'], { error: 'must be host or none' }).optional(),
  /** Paths the confined provider may read besides its workspace (its install, its config). */
  readable: z.array(ConfinedPath).optional(),
  /** Paths the confined provider may write besides its workspace (its own home, caches). */
  writable: z.array(ConfinedPath).optional(),
  /** Driver `loop` only (and required there): its model endpoint and budgets (docs/agents.md, Loop v0). */
  loop: LoopSettings.optional(),
  /**
   * At most this many runs of this harness at once on the Host (docs/stages.md, "Concurrency
   * limits"); an Assignment over it waits, `queued`, in the order it became ready. Absent: no limit.
   */
  maxRuns: z.number().int().positive().optional(),
}).superRefine((harness, deps) => {
  for (const [i, name] of (harness.envFrom ?? []).entries())
    if (harness.env !== undefined && Object.hasOwn(harness.env, name))
      deps.addIssue({ code: 'custom', path: ['envFrom', i], message: `${name} is also set in env; give it once` });
  if (harness.driver === 'loop') checkLoopHarness(harness, deps);
  else {
    if (harness.command === undefined)
      deps.addIssue({ code: 'custom', path: ['command'], message: 'required: the executable to start' });
    if (harness.loop !== undefined)
      deps.addIssue({ code: 'custom', path: ['loop'], message: 'only a harness of driver loop takes loop settings' });
  }
});

/** A `loop` harness: no process of its own, a model, its settings, and its key among the variables `envFrom` brings. */
function checkLoopHarness(
  harness: {
    command?: string | undefined;
    model?: string | undefined;
    envFrom?: string[] | undefined;
    loop?: LoopSettings | undefined;
  },
  deps: z.RefinementCtx,
): void {
  if (harness.command !== undefined)
    deps.addIssue({ code: 'custom', path: ['command'], message: 'driver loop starts no process: remove command' });
  if (harness.model === undefined)
    deps.addIssue({ code: 'custom', path: ['model'], message: 'required for driver loop: the model to call' });
  if (harness.loop === undefined)
    deps.addIssue({ code: 'custom', path: ['loop'], message: 'required for driver loop: { format, baseUrl, … }' });
  const keyFrom = harness.loop?.keyFrom;
  if (keyFrom !== undefined && !(harness.envFrom ?? []).includes(keyFrom))
    deps.addIssue({
      code: 'custom',
      path: ['loop', 'keyFrom'],
      message: `${keyFrom} must also be in envFrom, which brings its value to the loop`,
    });
}
export type HarnessConfig = z.infer<typeof HarnessConfig>;

/**
 * What `ordivon.config.json` holds, and what `openHost` takes beside the state root: the
 * harnesses by name (as `assignment.commit` names them) and the default approval policy, which a
 * harness's own `approvals` overrides.
 */
export const HostConfig = strictObject({
  harnesses: z.record(z.string().min(1, 'a harness name must not be empty'), HarnessConfig),
  approvals: ApprovalPolicy.optional(),
  /**
   * How every process started for a Task is confined (docs/threat-model.md): `bwrap` (default) or
   * `none`, said explicitly, which runs agents and verification unconfined and records
   * `confined: false` on each of their receipts.
   */
  confinement: ConfinementMode.optional(),
  /** Resource limits of each confined process tree (memoryMiB, processes, fileSizeMiB, openFiles). */
  limits: ConfinementLimits.optional(),
  /**
   * How many agent runs this Host starts at once: at most `runs` (docs/stages.md, "Concurrency
   * limits"); an Assignment over it waits, `queued`, in the order it became ready. Absent: no limit.
   */
  concurrency: strictObject({ runs: z.number().int().positive().optional() }).optional(),
  /**
   * Effect adapters the CLI makes, by the name a candidate's `effect` action gives
   * (docs/publication.md): `{"kind": "git", "remote": …}` publishes a Task Attempt's workspace.
   */
  effects: z
    .record(
      z.string().min(1, 'an adapter name must not be empty'),
      strictObject({
        kind: z.literal('git', { error: 'must be git' }),
        remote: z.string({ error: 'required: the remote git pushes to' }).min(1),
        endpoint: z.string().min(1).optional(),
        exclude: z.array(z.string().min(1)).optional(),
      }),
    )
    .optional(),
});
export type HostConfig = z.infer<typeof HostConfig>;

/**
 * What a configuration gives `openHost` besides its harnesses: the approval policy, the
 * confinement and its limits, the concurrency limit, each only when the file names it.
 */
export function hostOptionsOf(
  config: HostConfig,
): Pick<HostConfig, 'approvals' | 'confinement' | 'limits' | 'concurrency'> {
  return {
    ...(config.approvals ? { approvals: config.approvals } : {}),
    ...(config.concurrency ? { concurrency: config.concurrency } : {}),
    ...(config.confinement ? { confinement: config.confinement } : {}),
    ...(config.limits ? { limits: config.limits } : {}),
  };
}

/** The first issue of a config parse as `invalid_config`, with an unknown key named in the path (`harnesses.x.envfrom`). */
function invalidConfig(error: ZodError, prefix: string[]): HostError {
  // A misspelt key first: it explains the required field it left missing ("harnesess" for "harnesses").
  const issue = error.issues.find((i) => i.code === 'unrecognized_keys') ?? error.issues[0];
  const path = [...prefix, ...(issue?.path ?? []).map(String)];
  if (issue?.code === 'unrecognized_keys' && issue.keys[0] !== undefined) path.push(issue.keys[0]);
  const where = issuePath(path);
  return new HostError('invalid_config', `${where}: ${issue?.message ?? 'invalid configuration'}`, { path: where });
}

/**
 * Checks that every `envFrom` variable is set (and not empty) in `env`. Throws `env_missing` with
 * the path `harnesses.<name>.envFrom.<i>` for the first that is not: refusing before anything
 * opens beats a provider started without its key.
 */
export function assertEnvFrom(harnesses: Record<string, HarnessConfig>, env: NodeJS.ProcessEnv): void {
  for (const [name, harness] of Object.entries(harnesses))
    for (const [i, variable] of (harness.envFrom ?? []).entries()) {
      const missing = envValueMissing(env[variable]);
      if (missing !== null)
        throw new HostError(
          'env_missing',
          `${variable} ${missing} in the environment (harness ${name} names it in envFrom)`,
          { path: `harnesses.${name}.envFrom.${i}` },
        );
    }
}

/**
 * Parses a Host configuration (the parsed JSON of `ordivon.config.json`) and checks its `envFrom`
 * variables against `env`. Throws `HostError` `invalid_config` (`path` names the field, e.g.
 * `harnesses.gemini.driver`) or `env_missing`. Pure: nothing is opened or written.
 */
export function parseHostConfig(value: unknown, env: NodeJS.ProcessEnv = process.env): HostConfig {
  const parsed = HostConfig.safeParse(value);
  if (!parsed.success) throw invalidConfig(parsed.error, []);
  assertEnvFrom(parsed.data.harnesses, env);
  return parsed.data;
}

/**
 * `openHost`'s check of its `harnesses` (entries that are configurations; a factory's result is
 * checked by the driver when it runs) and `approvals`, with the same codes and paths as a config
 * file. Returns the parsed configurations.
 */
export function checkHostHarnesses(
  harnesses: Record<string, HarnessConfig | HarnessFactory>,
  approvals: unknown,
  env: NodeJS.ProcessEnv,
): Record<string, HarnessConfig | HarnessFactory> {
  const checked: Record<string, HarnessConfig | HarnessFactory> = {};
  for (const [name, harness] of Object.entries(harnesses)) {
    if (typeof harness === 'function') {
      checked[name] = harness;
      continue;
    }
    const parsed = HarnessConfig.safeParse(harness);
    if (!parsed.success) throw invalidConfig(parsed.error, ['harnesses', name]);
    assertEnvFrom({ [name]: parsed.data }, env);
    checked[name] = withAbsolutePaths(parsed.data);
  }
  if (approvals !== undefined) {
    const parsed = ApprovalPolicy.safeParse(approvals);
    if (!parsed.success) throw invalidConfig(parsed.error, ['approvals']);
  }
  return checked;
}

/** The harness with its relative `readable` / `writable` paths resolved against the working directory. */
function withAbsolutePaths(harness: HarnessConfig): HarnessConfig {
  const absolute = (paths: string[] | undefined) => paths?.map((p) => resolve(p));
  return {
    ...harness,
    ...(harness.readable ? { readable: absolute(harness.readable) } : {}),
    ...(harness.writable ? { writable: absolute(harness.writable) } : {}),
  };
}

/**
 * Refuses (`invalid_config`, path `harnesses.<name>.readable.<i>`) a harness's readable or writable
 * path that is inside the state root or contains it: nothing of the state root is ever mounted into
 * a sandbox, and a configuration that asks for it is a mistake to name, not to half-honour.
 */
export function assertReachOutsideState(
  harnesses: Record<string, HarnessConfig | HarnessFactory>,
  stateRoot: string,
): void {
  const overlaps = (a: string, b: string): boolean => {
    const rel = relative(a, b);
    return rel === '' || (!rel.startsWith('..' + sep) && rel !== '..' && !isAbsolute(rel));
  };
  for (const [name, harness] of Object.entries(harnesses)) {
    if (typeof harness === 'function') continue;
    for (const field of ['readable', 'writable'] as const)
      for (const [i, path] of (harness[field] ?? []).entries())
        if (overlaps(stateRoot, path) || overlaps(path, stateRoot))
          throw new HostError(
            'invalid_config',
            `harnesses.${name}.${field}.${i}: ${path} overlaps the state root ${stateRoot}, which no confined process may see`,
            { path: `harnesses.${name}.${field}.${i}` },
          );
  }
}

/** Chooses the launch configuration per Assignment (e.g. a scripted provider's behaviour per purpose). */
export type HarnessFactory = (assignment: {
  taskId: string;
  generation: number;
  purpose: string;
  /** The spec's stage the Assignment runs. */
  stage: string;
  /** The Context the run is bound to (a decision names it). */
  contextDigest: string;
  workspace: string;
}) => HarnessConfig | Promise<HarnessConfig>;

/**
 * The run limits of `openHost`'s `concurrency` and its harnesses' `maxRuns` (a factory has none),
 * as the Supervisor takes them. Throws `invalid_config` at `concurrency.<field>` for a bad
 * `concurrency`, with the same codes and paths as a config file; undefined when nothing is limited.
 */
export function runLimitsOf(
  concurrency: unknown,
  harnesses: Record<string, HarnessConfig | HarnessFactory>,
): RunLimits | undefined {
  const parsed = HostConfig.shape.concurrency.safeParse(concurrency);
  if (!parsed.success) throw invalidConfig(parsed.error, ['concurrency']);
  const perHarness = Object.entries(harnesses).flatMap(([name, harness]) =>
    typeof harness !== 'function' && harness.maxRuns !== undefined ? [[name, harness.maxRuns] as const] : [],
  );
  const runs = parsed.data?.runs;
  if (runs === undefined && perHarness.length === 0) return undefined;
  return {
    ...(runs !== undefined ? { runs } : {}),
    ...(perHarness.length > 0 ? { harnesses: Object.fromEntries(perHarness) } : {}),
  };
}
