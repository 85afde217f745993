import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { z } from 'zod';
import { Digest, canonicalJson } from '../store/index.js';
import { zodIssue } from '../base/index.js';
import type { RequiredArtifact, TaskSpec } from './task-spec.js';

/**
 * Artifact contracts: what the Host checks an artifact's bytes against before it retains them as
 * evidence. What a provider says about its work never enters here; only the files it left do.
 *
 * Inline JSON Schemas are compiled with ajv (draft 2020-12, strict about keywords): a maintained validator of
 * the standard users write their schemas in, whose strict mode turns a misspelt keyword into an
 * error when the Task is created instead of a check that silently passes. Converting JSON Schema
 * to zod would cover only the keywords a converter knows. Compiled validators are cached by the
 * schema's canonical JSON, so Tasks sharing a spec compile it once per process.
 */

/** zod schemas an embedder registers by name (`openHost({ artifactContracts })`). */
export type ArtifactContracts = Readonly<Record<string, z.ZodType>>;

/** A decision stage's artifact: the Context the provider was given, the candidate it chose, and why. */
export const DecisionArtifact = z.object({
  contextDigest: Digest,
  candidateId: z.string().min(1).max(100),
  rationale: z.string().max(20_000).default(''),
});
export type DecisionArtifact = z.infer<typeof DecisionArtifact>;

/** Always registered: `json` (any JSON value) and `decision` (a decision stage's choice). */
export const BUILT_IN_CONTRACTS: ArtifactContracts = { json: z.unknown(), decision: DecisionArtifact };

/** A failed check names the field that does not parse (`path`) when there is one. */
export type ArtifactCheck =
  | { ok: true; value: unknown }
  | { ok: false; code: 'artifact_invalid' | 'contract_unknown'; detail: string; path?: string };

/** A spec problem found while compiling its contracts: the spec path and why. */
export interface ContractIssue {
  path: string;
  message: string;
}

// strictSchema: an unknown keyword (a typo) fails compilation instead of being ignored. The other
// strict checks (a `required` property not under `properties`, keywords without a `type`) refuse
// schemas that are valid JSON Schema, so they stay off.
const ajv = new Ajv2020({
  allErrors: false,
  strictSchema: true,
  strictNumbers: true,
  strictTypes: false,
  strictTuples: false,
  strictRequired: false,
  allowUnionTypes: true,
});
const compiled = new Map<string, ValidateFunction>();

function jsonSchemaValidator(schema: unknown): ValidateFunction {
  const key = canonicalJson(schema);
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(schema as object);
    compiled.set(key, validate);
  }
  return validate;
}

/** How the contract is named in the evidence it admits (`EvidenceObject.schema`). */
export function contractLabel(artifact: RequiredArtifact): string {
  if (artifact.kind !== 'json') return artifact.kind;
  if (artifact.schema === undefined) return 'json';
  return typeof artifact.schema === 'string' ? artifact.schema : 'json-schema';
}

/**
 * Compiles every contract of a spec: inline JSON Schemas, text patterns, registered names.
 * Returns the first problem with its spec path, or undefined when all compile.
 */
export function checkSpecContracts(spec: TaskSpec, registered: ArtifactContracts): ContractIssue | undefined {
  const known = { ...BUILT_IN_CONTRACTS, ...registered };
  for (const [i, artifact] of spec.requiredArtifacts.entries()) {
    const at = `requiredArtifacts.${i}`;
    if (typeof artifact.schema === 'string' && !(artifact.schema in known))
      return {
        path: `${at}.schema`,
        message: `no artifact contract named ${artifact.schema} is registered (known: ${Object.keys(known).sort().join(', ')})`,
      };
    if (artifact.schema !== undefined && typeof artifact.schema !== 'string') {
      try {
        jsonSchemaValidator(artifact.schema);
      } catch (error) {
        return { path: `${at}.schema`, message: `JSON Schema does not compile: ${(error as Error).message}` };
      }
    }
    if (artifact.pattern !== undefined) {
      try {
        new RegExp(artifact.pattern, 'u');
      } catch (error) {
        return { path: `${at}.pattern`, message: `not a regular expression: ${(error as Error).message}` };
      }
    }
  }
  return undefined;
}

/** Checks an artifact's bytes against its contract. */
export function checkArtifact(
  artifact: RequiredArtifact,
  bytes: Uint8Array,
  registered: ArtifactContracts = {},
): ArtifactCheck {
  if (artifact.maxBytes !== undefined && bytes.length > artifact.maxBytes)
    return { ok: false, code: 'artifact_invalid', detail: `${bytes.length} bytes, more than ${artifact.maxBytes}` };
  if (artifact.kind === 'file') return { ok: true, value: null };
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { ok: false, code: 'artifact_invalid', detail: 'not UTF-8 text' };
  }
  if (artifact.kind === 'text') {
    if (artifact.pattern !== undefined && !new RegExp(artifact.pattern, 'u').test(text))
      return { ok: false, code: 'artifact_invalid', detail: `does not match /${artifact.pattern}/` };
    return { ok: true, value: text };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, code: 'artifact_invalid', detail: `not JSON: ${(error as Error).message}` };
  }
  const schema = artifact.schema ?? 'json';
  if (typeof schema !== 'string') {
    const validate = jsonSchemaValidator(schema);
    if (validate(json)) return { ok: true, value: json };
    const first = validate.errors?.[0];
    // A missing property is reported at its parent by ajv; name the property itself.
    const missing = first?.keyword === 'required' ? `/${String(first.params['missingProperty'])}` : '';
    const pointer = `${first?.instancePath ?? ''}${missing}`;
    const path = pointer ? pointer.slice(1).replaceAll('/', '.') : '(root)';
    return { ok: false, code: 'artifact_invalid', detail: `${path}: ${first?.message ?? 'invalid'}`, path };
  }
  const zodSchema = registered[schema] ?? BUILT_IN_CONTRACTS[schema];
  if (!zodSchema) return { ok: false, code: 'contract_unknown', detail: `no artifact contract named ${schema}` };
  const parsed = zodSchema.safeParse(json);
  if (!parsed.success) {
    const { code, path, message } = zodIssue('artifact_invalid', parsed.error);
    return { ok: false, code, detail: `${path}: ${message}`, path };
  }
  return { ok: true, value: parsed.data };
}

/** A placeholder of an instructions template: `{{task.goal}}`, `{{evidence:findings.json}}`. */
export const TEMPLATE_PLACEHOLDER = /\{\{\s*([a-z]+(?:\.[a-z]+)?(?::[^}\s]+)?)\s*\}\}/g;

/** The placeholders an instructions template may use (`evidence:NAME` for one artifact). */
export const TEMPLATE_NAMES = [
  'task.id',
  'task.title',
  'task.goal',
  'stage.name',
  'stage.purpose',
  'stage.artifacts',
  'assignment.generation',
  'assignment.harness',
  'acceptance',
  'evidence',
] as const;

/** The first unknown placeholder (or evidence of an undeclared artifact) in the spec's stage templates. */
export function checkSpecTemplates(spec: TaskSpec): ContractIssue | undefined {
  const artifacts = new Set(spec.requiredArtifacts.map((a) => a.name));
  for (const [i, stage] of (spec.stages ?? []).entries()) {
    for (const match of stage.instructions.matchAll(TEMPLATE_PLACEHOLDER)) {
      const name = match[1]!;
      const known = name.startsWith('evidence:')
        ? artifacts.has(name.slice('evidence:'.length))
        : (TEMPLATE_NAMES as readonly string[]).includes(name);
      if (!known)
        return {
          path: `stages.${i}.instructions`,
          message: `unknown placeholder {{${name}}} (known: ${TEMPLATE_NAMES.join(', ')}, evidence:<artifact>)`,
        };
    }
  }
  return undefined;
}
