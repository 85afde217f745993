/**
 * The spec's top-level fields, as help lists them: the keys of the schema that parses a spec
 * (objects/task-spec.ts; docs/stages.md describes each). A list, not `Object.keys(TaskSpec.shape)`,
 * so that `ordivon run --help` loads no zod; test/cli/startup-modules.test.ts holds it to the schema.
 */
export const SPEC_FIELDS = [
  'taskId',
  'title',
  'goal',
  'requiredArtifacts',
  'stages',
  'result',
  'acceptance',
  'workspaceSeed',
  'world',
  'sources',
  'labels',
  'start',
] as const;

/** The line `run --help` and `task create --help` give the spec's fields. */
export const SPEC_FIELDS_HELP = `The spec's fields: ${SPEC_FIELDS.join(', ')}; an unknown key is invalid_spec.`;
