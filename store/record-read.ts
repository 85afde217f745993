import type { RootDatabase } from 'lmdb';
import type { ZodType } from 'zod';
import { zodIssue } from '../base/index.js';
import { isCommitFailure } from './commit-failure.js';
import { StoreError } from './errors.js';

/** Runs a read; a value lmdb cannot decode becomes `code` with the details. */
export function decodeOrFail<T>(
  fn: () => T,
  code: 'object_corrupt' | 'record_corrupt',
  details: Record<string, unknown>,
): T {
  try {
    return fn();
  } catch (error) {
    throw new StoreError(code, `cannot decode ${JSON.stringify(details)}: ${(error as Error).message}`, details);
  }
}

/** Parses a stored record; one the schema refuses is `record_corrupt` at the issue's path. */
export function parseOrFail<T>(schema: ZodType<T>, raw: unknown, details: Record<string, unknown>): T {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const { code, path, message } = zodIssue('record_corrupt', parsed.error);
    throw new StoreError(
      code,
      `stored record ${JSON.stringify(details)} is malformed at ${path}: ${message}`,
      details,
      {
        path,
      },
    );
  }
  return parsed.data;
}

/**
 * Awaits a commit until durable; a failed commit (disk full, I/O error) becomes `storage_failed`,
 * retryable. A write's own promise (the environment is opened `separateFlushed`) carries the
 * flush of the commit it is in, and that is awaited; a promise without it (a transaction's) waits
 * for the environment's latest flush, which covers every commit made before it.
 */
export async function durable<T>(env: RootDatabase, commit: Promise<T>, details: Record<string, unknown>): Promise<T> {
  try {
    const value = await commit;
    const own = (commit as Promise<T> & { flushed?: PromiseLike<unknown> }).flushed;
    await (own ?? env.flushed);
    return value;
  } catch (error) {
    if (error instanceof StoreError) throw error;
    const cause = await (isCommitFailure(error) ? error.commitError : Promise.reject(error)).catch(
      (e: Error) => e.message,
    );
    throw new StoreError('storage_failed', `commit failed, nothing was written: ${cause}`, details, {
      retryable: true,
      cause: error,
    });
  }
}
