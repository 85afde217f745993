import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { ConfinementRequest, DriverRunInput } from '../drivers/receipt.js';

/**
 * The Host's deterministic id for one Dispatch. Bounded so `['request', id, jobId]` stays well under
 * LMDB's 1978-byte key limit.
 */
export const ClientRequestId = z.string().min(1).max(512);

const AbsolutePath = z
  .string()
  .min(1)
  .refine((p) => isAbsolute(p), 'must be an absolute path');

/** A workspace-relative POSIX path that cannot name anything outside the workspace lexically. */
export const RelativePath = z
  .string()
  .min(1)
  .refine((p) => !isAbsolute(p) && !p.includes('\\'), 'must be a relative POSIX path')
  .refine((p) => !p.split('/').includes('..'), 'must not contain ".." segments');

/** Path patterns for source selection: a relative path (matches itself and everything under it) or a glob with `*` / `**`. */
export const PathPattern = RelativePath;

const Env = z.record(z.string(), z.string()).default({});
const TimeoutMs = z
  .number()
  .int()
  .positive()
  .max(7 * 24 * 3600 * 1000);

/** A plain process run in the workspace, in its own process group. */
export const CommandRun = z.strictObject({
  kind: z.literal('command'),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: Env,
  /** What the command may reach besides its workspace; absent: no network, nothing more. */
  confinement: ConfinementRequest.optional(),
});
export type CommandRun = z.infer<typeof CommandRun>;

/** A provider run executed by the injected harness executor (the piscina driver pool in the Host). */
export const HarnessRun = z.strictObject({
  kind: z.literal('harness'),
  input: DriverRunInput,
});
export type HarnessRun = z.infer<typeof HarnessRun>;

export const RunSpec = z.discriminatedUnion('kind', [CommandRun, HarnessRun]);
export type RunSpec = z.infer<typeof RunSpec>;

/** What `dispatch` accepts. Parsed with zod; nothing is written for input that fails to parse. */
export const DispatchInput = z.strictObject({
  clientRequestId: ClientRequestId,
  workspace: AbsolutePath,
  run: RunSpec,
  timeoutMs: TimeoutMs,
  /** Grace between SIGTERM and SIGKILL of the process group on timeout or cancel. */
  graceMs: z.number().int().nonnegative().max(600_000).optional(),
});
export type DispatchInput = z.infer<typeof DispatchInput>;
export type DispatchInputIn = z.input<typeof DispatchInput>;

/** What `verify` accepts: the acceptance command plus what to digest. */
export const VerifyInput = z.strictObject({
  clientRequestId: ClientRequestId,
  workspace: AbsolutePath,
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: Env,
  /** Workspace-relative test files whose digests prove the tests were not modified. */
  frozenTests: z.array(RelativePath).default([]),
  /** When given, only files matching one of these patterns count as source. */
  sourceInclude: z.array(PathPattern).optional(),
  /** Declared artifacts and anything else that is not source. */
  sourceExclude: z.array(PathPattern).default([]),
  /** What the acceptance command may reach besides its workspace; absent: no network, nothing more. */
  confinement: ConfinementRequest.optional(),
  timeoutMs: TimeoutMs,
  graceMs: z.number().int().nonnegative().max(600_000).optional(),
});
export type VerifyInput = z.infer<typeof VerifyInput>;
export type VerifyInputIn = z.input<typeof VerifyInput>;
