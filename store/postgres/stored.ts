import type { z } from 'zod';
import { StoreError } from '../errors.js';

/** A record stored as JSON text, parsed with its schema: `record_corrupt` naming `details` when it is not one. */
export function parseStored<T>(schema: z.ZodType<T>, text: string, details: Record<string, unknown>): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new StoreError('record_corrupt', `stored record ${JSON.stringify(details)} is not JSON`, details);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new StoreError('record_corrupt', `stored record ${JSON.stringify(details)} is malformed`, details);
  return parsed.data;
}

/** A database failure (unreachable, timed out, refused): `storage_failed`, retryable; an append's outcome is then unknown. */
export function storeErrorOf(error: unknown, details: Record<string, unknown>): StoreError {
  if (error instanceof StoreError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new StoreError('storage_failed', `PostgreSQL: ${message}`, details, { retryable: true, cause: error });
}
