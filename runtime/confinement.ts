import { lchownSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { ConfinementRequest, SandboxSpec } from '../drivers/receipt.js';
import { DEFAULT_SANDBOX_LIMITS, NOBODY, probeSandbox, type SandboxLimits } from '../os/index.js';
import { RuntimeError } from './errors.js';

/**
 * How the Runtime confines every process it starts for a job: `bwrap` (the default: bubblewrap's
 * namespaces, docs/threat-model.md) or `none`, which must be said explicitly and is recorded as
 * `confined: false` on every receipt and verification.
 */
export const ConfinementMode = z.enum(['bwrap', 'none'], { error: 'must be bwrap or none' });
export type ConfinementMode = z.infer<typeof ConfinementMode>;

const MiB = 1024 * 1024;

/** Resource limits of each confined process tree, as the configuration gives them. */
export const ConfinementLimits = z.strictObject({
  /** The data segment limit (RLIMIT_DATA) in MiB; default 8192. */
  memoryMiB: z.number().int().positive().optional(),
  /** Processes of the sandbox's account (RLIMIT_NPROC); default 4096. */
  processes: z.number().int().positive().optional(),
  /** The largest file a process may write (RLIMIT_FSIZE) in MiB; default 1024. */
  fileSizeMiB: z.number().int().positive().optional(),
  /** Open files per process (RLIMIT_NOFILE); default 4096. */
  openFiles: z.number().int().positive().optional(),
});
export type ConfinementLimits = z.infer<typeof ConfinementLimits>;

/** The configured limits over the defaults, in the units `prlimit` takes. */
export function sandboxLimits(limits: ConfinementLimits = {}): SandboxLimits {
  return {
    memoryBytes: limits.memoryMiB !== undefined ? limits.memoryMiB * MiB : DEFAULT_SANDBOX_LIMITS.memoryBytes,
    processes: limits.processes ?? DEFAULT_SANDBOX_LIMITS.processes,
    fileSizeBytes: limits.fileSizeMiB !== undefined ? limits.fileSizeMiB * MiB : DEFAULT_SANDBOX_LIMITS.fileSizeBytes,
    openFiles: limits.openFiles ?? DEFAULT_SANDBOX_LIMITS.openFiles,
  };
}

/**
 * Throws `confinement_unavailable` (naming what is missing and how to install it) unless `mode` is
 * `none` or a sandbox can be started on this machine.
 */
export function assertConfinement(mode: ConfinementMode): void {
  if (mode === 'none') return;
  const probe = probeSandbox();
  if (!probe.ok)
    throw new RuntimeError(
      'confinement_unavailable',
      `confinement is unavailable (${probe.missing}): ${probe.detail}`,
      {
        retryable: false,
      },
    );
}

/**
 * Builds the sandbox of each job of one Runtime: its workspace writable, what the run's request
 * adds, the Runtime's hidden paths (the state root) never, and — when the Host runs as root — the
 * unprivileged account it runs as, which then owns the workspace.
 */
export class Confiner {
  readonly mode: ConfinementMode;
  readonly #limits: SandboxLimits;
  readonly #hidden: string[];
  readonly #user: { uid: number; gid: number } | undefined;

  constructor(options: { mode: ConfinementMode; limits?: ConfinementLimits; hidden?: readonly string[] }) {
    this.mode = options.mode;
    this.#limits = sandboxLimits(options.limits);
    this.#hidden = [...(options.hidden ?? [])];
    this.#user = process.getuid?.() === 0 ? { ...NOBODY } : undefined;
  }

  /**
   * The sandbox job `jobId`'s process runs in, or undefined when confinement is `none`. As root, hands
   * the workspace and the writable paths to the sandbox's account first, so the confined process
   * can write them (the Host, as root, still reads and digests everything in them).
   */
  sandboxFor(
    jobId: string,
    workspace: string,
    request: ConfinementRequest | undefined,
    fallback: 'host' | 'none',
  ): SandboxSpec | undefined {
    if (this.mode === 'none') return undefined;
    if (this.#user !== undefined)
      for (const path of [workspace, ...(request?.writable ?? [])]) chownTree(path, this.#user.uid, this.#user.gid);
    return {
      workspace,
      network: request?.network ?? fallback,
      readable: request?.readable ?? [],
      writable: request?.writable ?? [],
      hidden: this.#hidden,
      limits: this.#limits,
      ...(this.#user !== undefined ? { user: this.#user } : {}),
      jobId,
    };
  }
}

/** `lchown` of `root` and everything under it that is not owned by `uid`:`gid` already. */
function chownTree(root: string, uid: number, gid: number): void {
  const visit = (path: string): void => {
    const stat = lstatSync(path, { throwIfNoEntry: false });
    if (stat === undefined) return;
    if (stat.uid !== uid || stat.gid !== gid) lchownSync(path, uid, gid);
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(root);
}
