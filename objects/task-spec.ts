import { z } from 'zod';
import { Digest, TaskId } from '../store/index.js';

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
const JsonSchema = z.union([z.record(z.string(), z.unknown()), z.boolean()]);

/**
 * What a required artifact must be for the Host to retain it as evidence:
 * - `json`: JSON, checked against `schema` — an inline JSON Schema, or the name of a zod schema an
 *   embedder registered (`openHost({ artifactContracts })`; `json` is built in: any JSON);
 * - `text`: UTF-8 text, optionally at most `maxBytes` and matching `pattern`;
 * - `file`: any bytes; only their digest and size are kept.
 */
export const RequiredArtifact = z.object({
  name: WorkspacePath,
  kind: z.enum(['json', 'text', 'file']).default('json'),
  schema: z.union([z.string().min(1).max(200), JsonSchema]).optional(),
  maxBytes: z.number().int().positive().optional(),
  /** A JavaScript regular expression (no flags) the whole text is tested with (`text` only). */
  pattern: z.string().min(1).max(2_000).optional(),
  description: z.string().max(2_000).optional(),
});
export type RequiredArtifact = z.infer<typeof RequiredArtifact>;

/** One stage of the Task's work: an Assignment names it. */
export const Stage = z.object({
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
});
export type Stage = z.infer<typeof Stage>;

export const TaskSpec = z
  .object({
    taskId: TaskId.optional(),
    title: z.string().min(1).max(500),
    goal: z.string().min(1).max(20_000),
    requiredArtifacts: z.array(RequiredArtifact).min(1),
    /** Absent: one stage named `work` that produces every artifact and proposes completion. */
    stages: z.array(Stage).min(1).optional(),
    /** The artifact the outcome's `result` is read from. */
    result: WorkspacePath.optional(),
    acceptance: z
      .object({
        command: z.string().min(1),
        args: z.array(z.string()).default([]),
        /** Workspace-relative paths of the frozen acceptance tests; their digests must not change. */
        frozenTests: z.array(WorkspacePath).default([]),
        timeoutMs: z.number().int().positive().default(120_000),
        /** sha256 of each frozen test as seeded; computed by the Host from `workspaceSeed` when absent. */
        frozenTestDigests: z.record(z.string(), Digest).optional(),
      })
      .optional(),
    /** Directory copied into each Task Attempt's workspace. */
    workspaceSeed: z.string().min(1).optional(),
    labels: z.record(z.string(), z.string()).default({}),
  })
  .superRefine((spec, ctx) => {
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
    if (spec.result !== undefined && !names.has(spec.result))
      ctx.addIssue({ code: 'custom', path: ['result'], message: `${spec.result} is not one of requiredArtifacts` });
  });
export type TaskSpec = z.infer<typeof TaskSpec>;
export type TaskSpecInput = z.input<typeof TaskSpec>;

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

/** The stage named `name`, or undefined. */
export function stageNamed(spec: TaskSpec, name: string): Stage | undefined {
  return stagesOf(spec).find((stage) => stage.name === name);
}
