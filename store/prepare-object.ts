import type { ZodType } from 'zod';
import { zodIssue } from '../base/index.js';
import { StoreError } from './errors.js';
import { objectText } from './object-bytes.js';
import type { StoredObject } from './records.js';

/** Zod schema per object kind; bodies are validated when written and again when read. */
export type ObjectKinds = Record<string, ZodType>;

export interface NewObject {
  kind: string;
  body: unknown;
}

/** An object already validated and named by `prepareObject` (so an append does not do it twice). */
export interface PreparedObject {
  digest: string;
  value: StoredObject;
  /** Its canonical JSON text: what is stored, and what `digest` is the sha256 of. */
  text: string;
}

/** Validates an object against its kind (`object_invalid`) and names it: digest of its canonical JSON text. */
export function prepareObject(kinds: ObjectKinds, object: NewObject): PreparedObject {
  const schema = kinds[object.kind];
  if (!schema) throw new StoreError('object_invalid', `unknown object kind ${object.kind}`, { kind: object.kind });
  const parsed = schema.safeParse(object.body);
  if (!parsed.success) {
    const { code, path, message } = zodIssue('object_invalid', parsed.error);
    throw new StoreError(code, `${object.kind} at ${path}: ${message}`, { kind: object.kind }, { path });
  }
  const value = { kind: object.kind, body: parsed.data };
  const { text, digest } = objectText(value);
  return { digest, value, text };
}
