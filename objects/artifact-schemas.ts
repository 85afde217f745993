import { z } from 'zod';
import { zodIssue } from '../base/index.js';

/**
 * Schemas the Host validates Artifacts with before retaining them as evidence. A Task spec names
 * one per required Artifact (`requiredArtifacts[].schema`). What a provider says about its work
 * never enters here; only the files it left in the workspace do.
 */
export const Diagnosis = z.object({
  location: z.object({
    file: z.string().min(1),
    line: z.number().int().positive().optional(),
    symbol: z.string().min(1).optional(),
  }),
  cause: z.string().min(10),
  evidence: z.array(z.string().min(1)).min(1),
});
export type Diagnosis = z.infer<typeof Diagnosis>;

export const Completion = z.object({
  summary: z.string().min(10),
  filesChanged: z.array(z.string().min(1)).min(1),
  testsRun: z.array(z.string().min(1)).min(1),
});
export type Completion = z.infer<typeof Completion>;

export const ARTIFACT_SCHEMAS: Record<string, z.ZodType> = {
  diagnosis: Diagnosis,
  completion: Completion,
  json: z.unknown(),
};

/** A failed check names the field that does not parse (`path`) when there is one. */
export type ArtifactCheck =
  | { ok: true; value: unknown }
  | { ok: false; code: 'artifact_invalid' | 'schema_unknown'; detail: string; path?: string };

/** Parses artifact bytes as JSON and validates them with the named schema. */
export function checkArtifact(schema: string, bytes: Uint8Array): ArtifactCheck {
  const zodSchema = ARTIFACT_SCHEMAS[schema];
  if (!zodSchema) return { ok: false, code: 'schema_unknown', detail: `no artifact schema named ${schema}` };
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch (error) {
    return { ok: false, code: 'artifact_invalid', detail: `not JSON: ${(error as Error).message}` };
  }
  const parsed = zodSchema.safeParse(json);
  if (!parsed.success) {
    const { code, path, message } = zodIssue('artifact_invalid', parsed.error);
    return { ok: false, code, detail: `${path}: ${message}`, path };
  }
  return { ok: true, value: parsed.data };
}
