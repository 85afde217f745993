import { randomBytes } from 'node:crypto';
import { cp, mkdir, rename, rm, stat } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { RuntimeError, parseError } from './errors.js';

const Segment = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/,
    'must be 1-128 characters of [A-Za-z0-9._-], starting with a letter or digit',
  );

export const WorkspaceRequest = z.strictObject({
  root: z
    .string()
    .min(1)
    .refine((p) => isAbsolute(p), 'must be an absolute path'),
  taskId: Segment,
  attempt: z.number().int().positive(),
  /** A directory (typically a repository) copied into the new workspace. */
  seedFrom: z
    .string()
    .min(1)
    .refine((p) => isAbsolute(p), 'must be an absolute path')
    .optional(),
});
export type WorkspaceRequest = z.infer<typeof WorkspaceRequest>;

/** The directory of one Task Attempt: `<root>/<taskId>/attempt-<n>`. */
export function workspacePath(root: string, taskId: string, attempt: number): string {
  return join(resolve(root), taskId, `attempt-${attempt}`);
}

/**
 * Creates (or returns, when it already exists) the absolute workspace directory of one Task Attempt.
 * With `seedFrom`, the seed is copied into a temporary sibling first and renamed into place, so a
 * crash mid-copy never leaves a half-seeded workspace under the final name; symlinks are copied as
 * symlinks. An existing workspace is returned as is (never re-seeded). Rejects `invalid_options`, or
 * `workspace_missing` when `seedFrom` is not a directory.
 */
export async function createWorkspace(raw: z.input<typeof WorkspaceRequest>): Promise<string> {
  const parsed = WorkspaceRequest.safeParse(raw);
  if (!parsed.success) throw parseError('invalid_options', parsed.error);
  const { root, taskId, attempt, seedFrom } = parsed.data;
  const target = workspacePath(root, taskId, attempt);
  if ((await stat(target).catch(() => undefined))?.isDirectory()) return target;
  const parent = join(resolve(root), taskId);
  await mkdir(parent, { recursive: true });
  if (seedFrom === undefined) {
    await mkdir(target, { recursive: true });
    return target;
  }
  if (!(await stat(seedFrom).catch(() => undefined))?.isDirectory()) {
    throw new RuntimeError('workspace_missing', `seed ${seedFrom} is not a directory`);
  }
  const staging = join(parent, `.attempt-${attempt}.seeding-${randomBytes(4).toString('hex')}`);
  try {
    await cp(seedFrom, staging, { recursive: true, verbatimSymlinks: true, errorOnExist: true, force: false });
    await rename(staging, target);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    // A concurrent creator won the rename: its workspace is as good as ours.
    if ((await stat(target).catch(() => undefined))?.isDirectory()) return target;
    throw error;
  }
  return target;
}
