import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { strictObject } from '../base/index.js';
import { Digest, TaskId } from '../store/records.js';

/**
 * A Task spec: what a user asks of the Host. Its stages and artifact contracts are data, so the
 * Host carries anybody's agent work: nothing in the Host knows one workload's stage names, file
 * names or schemas. Cross-field rules (stage names unique, `produces` and `result` naming declared
 * artifacts) are part of this schema; what needs compiling (JSON Schemas, regular expressions,
 * registered contract names, instruction templates) is checked by `checkSpecContracts` when a Task
 * is created, never on every read of a stored spec.
 */

/** A workspace-relative path that cannot name anything outside the workspace. */
export const WorkspacePath = z
  .string()
  .min(1)
  .max(200)
  .refine(
    (n) => !n.startsWith('/') && !n.includes('\\') && !n.split('/').some((part) => part === '..' || part === ''),
    'must be a relative path inside the workspace (no "..", no leading "/")',
  );

/** An inline JSON Schema (compiled with ajv when the Task is created). */
/** How many children one branch may have (parallel Attempts or fanned-out Tasks). */
export const MAX_CHILDREN = 64;

/** A harness a parallel stage names; `+` joins several in an Assignment (`a+b+c`), so no name holds one. */
const HarnessName = z
  .string()
  .min(1)
  .max(100)
  .refine((name) => !name.includes('+'), 'a harness name has no "+"');

const JsonSchema = z.union([z.record(z.string(), z.unknown()), z.boolean()]);

/** A source id: what the Context and candidates name it by. */
const SourceId = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[a-z][a-z0-9_.-]*$/, 'lower-case letters, digits, "_", "." and "-", starting with a letter');

/** Ids the Host gives the Task's own items; a spec's sources cannot take them. */
export const HOST_SOURCE_IDS = ['goal', 'task-spec', 'assignment', 'workspace'] as const;

/** A JSON object given to an Effect adapter as its input. */
const JsonObject = z.record(z.string(), z.unknown());

/** The built-in contract of a decision artifact: which Context, which candidate, and why. */
export const DECISION_CONTRACT = 'decision';

/**
 * The most a Task spec may hold, as UTF-8 JSON: 1 MiB. A spec is read whole into memory, stored
 * as one object and compiled into every Context; the largest shipped one is a few KiB, so a spec
 * past this is a mistake (or an attack), refused `invalid_spec` before it is parsed.
 */
export const SPEC_MAX_BYTES = 1024 * 1024;

/** How the spec's objects are made: `z.object` (unknown keys dropped) or `strictObject` (refused). */
type ObjectOf = <S extends z.ZodRawShape>(shape: S) => z.ZodObject<S, z.core.$strip>;

/**
 * The spec's schemas, built once per way of treating unknown keys: a spec from outside (a file, a
 * request body, `createTask`) is parsed strictly, so a mistyped key is refused rather than
 * dropped with the field it meant left at its default; a spec read back from the store is parsed
 * leniently, so one written by an older Host still reads.
 */
function specSchemas(object: ObjectOf) {
  /**
   * What a required artifact must be for the Host to retain it as evidence:
   * - `json`: JSON, checked against `schema` — an inline JSON Schema, or the name of a zod schema an
   *   embedder registered (`openHost({ artifactContracts })`; `json` is built in: any JSON);
   * - `text`: UTF-8 text, optionally at most `maxBytes` and matching `pattern`;
   * - `file`: any bytes; only their digest and size are kept.
   */
  const RequiredArtifact = object({
    name: WorkspacePath,
    kind: z.enum(['json', 'text', 'file']).default('json'),
    schema: z.union([z.string().min(1).max(200), JsonSchema]).optional(),
    maxBytes: z.number().int().positive().optional(),
    /** A JavaScript regular expression (no flags) the whole text is tested with (`text` only). */
    pattern: z.string().min(1).max(2_000).optional(),
    description: z.string().max(2_000).optional(),
  });

  /**
   * Something the Context reads besides the Task's own objects: a file or directory in the
   * workspace, or in the spec's `world` (a shared upstream outside the workspace that others may
   * revise). A trusted source is authority: if it moves before a result made against it is
   * admitted, the result is stale. Everything not declared trusted is data.
   */
  const Source = object({
    id: SourceId,
    path: WorkspacePath,
    in: z.enum(['workspace', 'world']).default('workspace'),
    trust: z.enum(['trusted', 'untrusted']).default('untrusted'),
    description: z.string().max(2_000).optional(),
    /** Other sources (ids) this one is only valid with: if one moves, this one is stale too; untrusted taints it. */
    dependsOn: z.array(SourceId).default([]),
  });

  /**
   * What the Host does when a candidate is admitted:
   * - `none`: nothing;
   * - `command`: run a command in the workspace (a Runtime job);
   * - `effect`: perform an external operation through the Effect adapter the embedder registered as
   *   `adapter` (docs/effects.md): intent and request id are committed first, a lost response makes
   *   the Effect `unknown`, and `reconcile` says who reconciles it — the Host by lookup (`host`), or
   *   the next decision (`decision`);
   * - `reconcile`: look the Task's unknown Effect up by its retained request id;
   * - `abandon`: classify the Task's Effect as failed (refused while it is unknown).
   */
  const CandidateAction = z.discriminatedUnion('kind', [
    object({ kind: z.literal('none') }),
    object({
      kind: z.literal('command'),
      command: z.string().min(1),
      args: z.array(z.string()).default([]),
      timeoutMs: z.number().int().positive().default(120_000),
    }),
    object({
      kind: z.literal('effect'),
      adapter: z.string().min(1).max(100),
      operation: z.string().min(1).max(200),
      target: z.string().min(1).max(2_000),
      input: JsonObject.default({}),
      reconcile: z.enum(['host', 'decision']).default('host'),
    }),
    object({ kind: z.literal('reconcile') }),
    object({ kind: z.literal('abandon') }),
  ]);

  /** One action a decision stage may choose, and the sources that give it authority. */
  const Candidate = object({
    id: z
      .string()
      .min(1)
      .max(100)
      .regex(/^[a-z0-9][a-z0-9_.-]*$/, 'lower-case letters, digits, "_", "." and "-"'),
    summary: z.string().min(1).max(2_000),
    /** Source ids (or `goal`) that support the action; its authority is trusted only if every one is. */
    supportedBy: z.array(SourceId).default([]),
    action: CandidateAction,
  });

  /** A decision stage: the provider chooses one candidate, in an artifact the Host admits; the Host acts. */
  const Decision = object({
    /** The artifact (one of the stage's `produces`, contract `decision`) the choice is written to. */
    artifact: WorkspacePath,
    candidates: z.array(Candidate).min(1),
    /**
     * A chosen candidate whose authority is not trusted: refused `untrusted_authority` (`refuse`,
     * the default), or put to a person as a DecisionRequest naming its untrusted sources (`ask`).
     */
    untrustedAuthority: z.enum(['refuse', 'ask']).optional(),
  });

  /** One stage of the Task's work: an Assignment names it. */
  const Stage = object({
    name: z
      .string()
      .min(1)
      .max(100)
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'letters, digits, "_", "." and "-"'),
    /** What the stage is for, shown to the provider and in receipts (the name when absent). */
    purpose: z.string().min(1).max(200).optional(),
    /** A template filled by the Context compiler (`{{task.goal}}`, `{{stage.artifacts}}`, …; see docs/stages.md). */
    instructions: z.string().max(20_000).default(''),
    /** The required artifacts this stage writes; only these are taken from its runs as evidence. */
    produces: z.array(WorkspacePath).default([]),
    /** After its run the Host proposes completion (else the Task waits for the next Assignment). */
    proposesCompletion: z.boolean().default(false),
    /** A decision stage: the candidates its provider chooses among (see `Decision`). */
    decision: Decision.optional(),
    /**
     * How often the Host dispatches the stage again, under a new generation, when its run was
     * stopped by the Host (a drain, a crash: the job `abandoned`), and how long it waits first
     * (measured from the stopped run's observation). Absent: `{max: 1, backoffMs: 0}`
     * (`stageRetry`). Exhausted: a DecisionRequest asks a person.
     */
    retry: object({
      max: z.number().int().min(0).max(100),
      backoffMs: z.number().int().min(0).max(86_400_000).default(0),
    }).optional(),
    /**
     * What the stage may spend (docs/stages.md, "Budgets"): `tokens` and `turns` bound its Loop v0
     * conversation, counted from its start or from where it last went over them and was let go on
     * (a stage naming them runs on a `loop` harness only); `wallMs` is each run's deadline. The
     * harness's own bounds still hold: the tighter stops first. Over `tokens` or `turns`, the run
     * ends failed (`onExceeded` `stop`, the default) or a DecisionRequest asks a person whether it
     * goes on (`ask`).
     */
    budget: object({
      tokens: z.number().int().positive().optional(),
      turns: z.number().int().positive().optional(),
      wallMs: z.number().int().positive().max(86_400_000).optional(),
      onExceeded: z.enum(['stop', 'ask'], { error: 'must be stop or ask' }).default('stop'),
    })
      .refine((b) => b.tokens !== undefined || b.turns !== undefined || b.wallMs !== undefined, {
        error: 'names tokens, turns or wallMs',
      })
      .optional(),
    /**
     * Parallel Attempts (docs/branch-and-join.md): the harnesses that run this stage side by side,
     * each as a child Task in a workspace of its own, when its Assignment names one harness (an
     * Assignment naming `a+b+c` runs those instead).
     */
    parallel: z.array(HarnessName).min(2).max(MAX_CHILDREN).optional(),
    /**
     * How parallel Attempts are joined: `first_verified` (default: the first verified child wins,
     * the others are cancelled) or `all` (every child ends; a person picks among the verified).
     */
    join: z.enum(['first_verified', 'all'], { error: 'must be first_verified or all' }).optional(),
    /** Child Tasks from a template, one per item of a JSON array artifact an earlier stage produced. */
    fanOut: object({
      /** The required artifact (a JSON array) whose items the children are made from. */
      from: WorkspacePath,
      /** The children's Task spec; `{{item}}` in its title, goal and stage instructions is the item. */
      spec: z.record(z.string(), z.unknown()),
      /** `all` (default), `any` or `{atLeast: N}` of the children completed. */
      join: z
        .union([z.enum(['all', 'any']), object({ atLeast: z.number().int().min(1).max(MAX_CHILDREN) })], {
          error: 'must be all, any or {atLeast: N}',
        })
        .default('all'),
    }).optional(),
  });

  const TaskSpec = object({
    taskId: TaskId.optional(),
    title: z.string().min(1).max(500),
    goal: z.string().min(1).max(20_000),
    requiredArtifacts: z.array(RequiredArtifact).min(1),
    /** Absent: one stage named `work` that produces every artifact and proposes completion. */
    stages: z.array(Stage).min(1).optional(),
    /** The artifact the outcome's `result` is read from. */
    result: WorkspacePath.optional(),
    acceptance: object({
      command: z.string().min(1),
      args: z.array(z.string()).default([]),
      /** Workspace-relative paths of the frozen acceptance tests; their digests must not change. */
      frozenTests: z.array(WorkspacePath).default([]),
      timeoutMs: z.number().int().positive().default(120_000),
      /**
       * The network of the confined verification: `none` (when absent: a network namespace of its
       * own, nothing reachable) or `host`.
       */
      network: z.enum(['none', 'host'], { error: 'must be none or host' }).optional(),
      /** sha256 of each frozen test as seeded; computed by the Host from `workspaceSeed` when absent. */
      frozenTestDigests: z.record(z.string(), Digest).optional(),
    }).optional(),
    /** Directory copied into each Task Attempt's workspace. */
    workspaceSeed: z.string().min(1).optional(),
    /**
     * Directory of the sources declared `in: "world"`: outside the workspace, re-read at every
     * admission. Absolute (`ordivon` resolves a spec file's relative one against the file).
     */
    world: z.string().min(1).refine(isAbsolute, 'must be an absolute path').optional(),
    /** What the Context reads besides the Task's own objects, with its trust. */
    sources: z.array(Source).optional(),
    labels: z.record(z.string(), z.string()).default({}),
    /**
     * The Assignment the Host commits as soon as the Task is created, and, when a crash came
     * between the two commits, as soon as a Host serves the Task again (docs/stages.md).
     */
    start: object({ stage: z.string().min(1).max(200), harness: z.string().min(1).max(200) }).optional(),
  }).superRefine((spec, ctx) => {
    const names = new Set<string>();
    spec.requiredArtifacts.forEach((a, i) => {
      if (names.has(a.name))
        ctx.addIssue({
          code: 'custom',
          path: ['requiredArtifacts', i, 'name'],
          message: `${a.name} is declared twice`,
        });
      names.add(a.name);
      if (a.kind !== 'text' && a.pattern !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['requiredArtifacts', i, 'pattern'],
          message: 'only a text artifact has a pattern',
        });
      if (a.kind !== 'json' && a.schema !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['requiredArtifacts', i, 'schema'],
          message: 'only a json artifact has a schema',
        });
    });
    const stageNames = new Set<string>();
    spec.stages?.forEach((stage, i) => {
      if (stageNames.has(stage.name))
        ctx.addIssue({ code: 'custom', path: ['stages', i, 'name'], message: `stage ${stage.name} is declared twice` });
      stageNames.add(stage.name);
      stage.produces.forEach((name, j) => {
        if (!names.has(name))
          ctx.addIssue({
            code: 'custom',
            path: ['stages', i, 'produces', j],
            message: `${name} is not one of requiredArtifacts`,
          });
      });
    });
    checkSources(spec, ctx);
    spec.stages?.forEach((stage, i) => {
      if (stage.decision) checkDecision(spec, stage, i, ctx);
      checkBranch(names, stage, i, ctx);
    });
    if (spec.result !== undefined && !names.has(spec.result))
      ctx.addIssue({ code: 'custom', path: ['result'], message: `${spec.result} is not one of requiredArtifacts` });
    const stageOf = spec.start?.stage;
    if (stageOf !== undefined && !(spec.stages ? stageNames.has(stageOf) : stageOf === DEFAULT_STAGE))
      ctx.addIssue({ code: 'custom', path: ['start', 'stage'], message: `${stageOf} is not one of the spec's stages` });
  });
  return { RequiredArtifact, Source, CandidateAction, Candidate, Decision, Stage, TaskSpec };
}

const lenient = specSchemas(z.object);
// The strict objects parse to the same output; only what they accept differs.
const strict = specSchemas(strictObject as unknown as ObjectOf);

export const { RequiredArtifact, Source, CandidateAction, Candidate, Decision, Stage } = lenient;
export type RequiredArtifact = z.infer<typeof RequiredArtifact>;
export type Source = z.infer<typeof Source>;
export type CandidateAction = z.infer<typeof CandidateAction>;
export type Candidate = z.infer<typeof Candidate>;
export type Decision = z.infer<typeof Decision>;
export type Stage = z.infer<typeof Stage>;

/** A Task spec as read back from the store: unknown keys (a field an older Host wrote) are dropped. */
export const TaskSpec = lenient.TaskSpec;
/** A Task spec from outside: the same schema, refusing unknown keys at every level (`invalid_spec` at the key's path). */
export const TaskSpecStrict = strict.TaskSpec;
export type TaskSpec = z.infer<typeof TaskSpec>;

type SpecIn = Pick<TaskSpec, 'sources' | 'world' | 'requiredArtifacts'>;

/** The spec's sources (none when it declares none). */
export function sourcesOf(spec: Pick<TaskSpec, 'sources'>): Source[] {
  return spec.sources ?? [];
}

/** Source ids unique and not the Host's, dependencies declared and acyclic, a `world` for world sources. */
function checkSources(spec: SpecIn, ctx: z.RefinementCtx): void {
  const ids = new Map<string, number>();
  sourcesOf(spec).forEach((source, i) => {
    if ((HOST_SOURCE_IDS as readonly string[]).includes(source.id))
      ctx.addIssue({ code: 'custom', path: ['sources', i, 'id'], message: `${source.id} is the Host's own item` });
    else if (ids.has(source.id))
      ctx.addIssue({ code: 'custom', path: ['sources', i, 'id'], message: `source ${source.id} is declared twice` });
    ids.set(source.id, i);
    if (source.in === 'world' && spec.world === undefined)
      ctx.addIssue({ code: 'custom', path: ['sources', i, 'in'], message: "a world source needs the spec's world" });
  });
  sourcesOf(spec).forEach((source, i) =>
    source.dependsOn.forEach((id, j) => {
      if (!ids.has(id) && id !== 'goal')
        ctx.addIssue({ code: 'custom', path: ['sources', i, 'dependsOn', j], message: `no source ${id}` });
    }),
  );
  const visiting = new Set<string>();
  const done = new Set<string>();
  const cyclic = (id: string): boolean => {
    if (done.has(id)) return false;
    if (visiting.has(id)) return true;
    visiting.add(id);
    const i = ids.get(id);
    const found = i !== undefined && sourcesOf(spec)[i]!.dependsOn.some(cyclic);
    visiting.delete(id);
    done.add(id);
    return found;
  };
  sourcesOf(spec).forEach((source, i) => {
    if (cyclic(source.id))
      ctx.addIssue({ code: 'custom', path: ['sources', i, 'dependsOn'], message: `${source.id} depends on itself` });
  });
}

/** A decision's artifact is one the stage writes, with the decision contract; candidate ids unique and supported by declared sources. */
function checkDecision(spec: SpecIn, stage: Stage, i: number, ctx: z.RefinementCtx): void {
  const decision = stage.decision!;
  const at = ['stages', i, 'decision'];
  if (!stage.produces.includes(decision.artifact))
    ctx.addIssue({ code: 'custom', path: [...at, 'artifact'], message: `${decision.artifact} is not in produces` });
  const artifact = spec.requiredArtifacts.find((a) => a.name === decision.artifact);
  if (artifact && (artifact.kind !== 'json' || artifact.schema !== DECISION_CONTRACT))
    ctx.addIssue({
      code: 'custom',
      path: [...at, 'artifact'],
      message: `${decision.artifact} must be declared kind json with schema "${DECISION_CONTRACT}"`,
    });
  const sources = new Set(['goal', ...sourcesOf(spec).map((s) => s.id)]);
  const ids = new Set<string>();
  decision.candidates.forEach((candidate, j) => {
    if (ids.has(candidate.id))
      ctx.addIssue({
        code: 'custom',
        path: [...at, 'candidates', j, 'id'],
        message: `${candidate.id} is declared twice`,
      });
    ids.add(candidate.id);
    candidate.supportedBy.forEach((id, k) => {
      if (!sources.has(id))
        ctx.addIssue({ code: 'custom', path: [...at, 'candidates', j, 'supportedBy', k], message: `no source ${id}` });
    });
  });
}
/** A branch stage: parallel or a fan-out, not both, not a decision; its list artifact declared; harnesses named once. */
function checkBranch(artifacts: Set<string>, stage: Stage, i: number, ctx: z.RefinementCtx): void {
  const at = (...path: Array<string | number>) => ['stages', i, ...path];
  const issue = (path: Array<string | number>, message: string) => ctx.addIssue({ code: 'custom', path, message });
  if (stage.parallel && stage.fanOut) issue(at('fanOut'), 'a stage runs parallel Attempts or fans out, not both');
  if ((stage.parallel || stage.fanOut) && stage.decision)
    issue(at('decision'), 'a decision stage runs one harness: no parallel or fanOut');
  if (stage.join !== undefined && !stage.parallel) issue(at('join'), 'join goes with parallel');
  if (stage.parallel && stage.produces.length === 0)
    issue(at('produces'), 'a parallel stage produces at least one artifact (what its Attempts are verified on)');
  stage.parallel?.forEach((name, j) => {
    if (stage.parallel!.indexOf(name) !== j) issue(at('parallel', j), `${name} is named twice`);
  });
  if (stage.fanOut && !artifacts.has(stage.fanOut.from))
    issue(at('fanOut', 'from'), `${stage.fanOut.from} is not one of requiredArtifacts`);
  if (stage.fanOut && stage.produces.includes(stage.fanOut.from))
    issue(at('fanOut', 'from'), `${stage.fanOut.from} must come from an earlier stage, not this one`);
}
export type TaskSpecInput = z.input<typeof TaskSpec>;

/** A fan-out's child spec for one item: `{{item}}` replaced in every string of the template. */
export function fillItem(template: unknown, item: string): unknown {
  if (typeof template === 'string') return template.split('{{item}}').join(item);
  if (Array.isArray(template)) return template.map((v) => fillItem(v, item));
  if (template !== null && typeof template === 'object')
    return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, fillItem(v, item)]));
  return template;
}

/** A stage that runs as child Tasks: parallel Attempts or a fan-out. */
export function isBranchStage(stage: Stage): boolean {
  return stage.parallel !== undefined || stage.fanOut !== undefined;
}

/** The stage of a spec without `stages`: every artifact, and it proposes completion. */
export const DEFAULT_STAGE = 'work';

/** The spec's stages, or its one implicit stage. */
export function stagesOf(spec: TaskSpec): Stage[] {
  return (
    spec.stages ?? [
      {
        name: DEFAULT_STAGE,
        instructions: '',
        produces: spec.requiredArtifacts.map((a) => a.name),
        proposesCompletion: true,
      },
    ]
  );
}

/** A stage's retry policy (`retry`), its default filled in: one automatic re-dispatch, at once. */
export function stageRetry(stage: Stage): { max: number; backoffMs: number } {
  return { max: stage.retry?.max ?? 1, backoffMs: stage.retry?.backoffMs ?? 0 };
}

/** The stage named `name`, or undefined. */
export function stageNamed(spec: TaskSpec, name: string): Stage | undefined {
  return stagesOf(spec).find((stage) => stage.name === name);
}
