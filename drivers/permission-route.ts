import { createHash } from 'node:crypto';
import { isAbsolute, relative, resolve } from 'node:path';
import { z } from 'zod';
import {
  decidePermission,
  PermissionAnswer,
  PermissionEvidence,
  PermissionReason,
  type PermissionKind,
  type RunPolicy,
} from './permission-policy.js';

/** What one provider permission request asks, as a driver read it off the wire. */
export interface PermissionAsk {
  kind: PermissionKind;
  title: string;
  command: string | null;
  paths: string[];
}

/**
 * One permission request as the run answered it, kept in the receipt: the evidence, the answer and
 * its reason. An `escalate` was declined on the wire (a run cannot wait for a person); the Host
 * opens a DecisionRequest for it after the run.
 */
export const PermissionRecord = z.strictObject({
  evidence: PermissionEvidence,
  answer: PermissionAnswer,
  reason: z.union([PermissionReason, z.enum(['configured_accept', 'configured_decline'])]),
});
export type PermissionRecord = z.infer<typeof PermissionRecord>;

/** `path` relative to the workspace when inside it; null when it lies outside. */
function inside(cwd: string, path: string): string | null {
  const rel = relative(cwd, resolve(cwd, path));
  return rel === '..' || rel.startsWith(`..${'/'}`) || isAbsolute(rel) ? null : rel || '.';
}

/**
 * The stable key of a request's content: its kind, command and paths (workspace-relative where
 * inside), never the ids the provider or the protocol gave it (tool call ids, item ids, JSON-RPC
 * ids), so the same request asked again, by this run or a later one, has the same key. The title
 * counts only when nothing else says what the request is.
 */
export function permissionKey(ask: PermissionAsk, cwd: string): string {
  const paths = [...new Set(ask.paths.map((p) => inside(cwd, p) ?? resolve(cwd, p)))].sort();
  const content = {
    kind: ask.kind,
    command: ask.command,
    paths,
    ...(ask.command === null && paths.length === 0 ? { title: ask.title } : {}),
  };
  return 'perm-' + createHash('sha256').update(JSON.stringify(content)).digest('hex').slice(0, 20);
}

/**
 * The evidence a driver can establish for one request. From the wire alone: an edit inside the
 * Task Attempt's workspace is private and reversible (the workspace is the Attempt's own; the
 * Host re-reads and digests it); a delete is irreversible; a command's or a fetch's consequence is
 * unknown until someone looks; a fetch touches the shared network; a path outside the workspace
 * is shared. Spend is not visible on the wire (`budget: none`). The policy's `forbid` kinds, and
 * a request a person refused, are forbidden authority; an allowed one of the same key is a current
 * approval, bound to a world that may have moved since.
 */
export function evidenceOf(ask: PermissionAsk, cwd: string, policy: RunPolicy): PermissionEvidence {
  const key = permissionKey(ask, cwd);
  const insideWorkspace = ask.paths.every((p) => inside(cwd, p) !== null);
  const answered = policy.grants.find((g) => g.key === key);
  const refused = answered?.answer === 'refuse';
  const grant = refused ? undefined : answered;
  const touchesFiles = ask.kind === 'read' || ask.kind === 'edit' || ask.kind === 'delete';
  const reversible =
    ask.kind === 'read' || (ask.kind === 'edit' && insideWorkspace)
      ? 'reversible'
      : ask.kind === 'delete'
        ? 'irreversible'
        : 'unknown';
  return {
    key,
    kind: ask.kind,
    title: ask.title,
    command: ask.command,
    paths: ask.paths,
    insideWorkspace,
    reversible,
    ownership: ask.kind === 'fetch' || !insideWorkspace ? 'shared' : 'private',
    authority: refused || policy.forbid.includes(ask.kind) ? 'forbidden' : insideWorkspace ? 'held' : 'not_held',
    approval: grant ? { status: 'current', by: grant.by } : null,
    world: { bound: grant?.world === 'moved' ? `granted by ${grant.requestId}` : 'run', current: 'run' },
    budget: 'none',
    consequence: touchesFiles && ask.paths.length > 0 ? 'known' : 'unknown',
  };
}

/** Answers one request under the run's policy: `route` by the evidence, `accept`/`decline` as configured. */
export function routePermission(ask: PermissionAsk, cwd: string, policy: RunPolicy): PermissionRecord {
  const evidence = evidenceOf(ask, cwd, policy);
  if (policy.approvals === 'accept') return { evidence, answer: 'allow', reason: 'configured_accept' };
  if (policy.approvals === 'decline') return { evidence, answer: 'refuse', reason: 'configured_decline' };
  return { evidence, ...decidePermission(evidence) };
}

/**
 * The permission answers of one run, once per key and answer (a provider that asks the same thing
 * twice is recorded once), in the order first asked.
 */
export class PermissionLog {
  readonly #records = new Map<string, PermissionRecord>();
  constructor(
    private readonly cwd: string,
    private readonly policy: RunPolicy,
  ) {}

  route(ask: PermissionAsk): PermissionRecord {
    const record = routePermission(ask, this.cwd, this.policy);
    const id = `${record.evidence.key}:${record.answer}`;
    if (!this.#records.has(id)) this.#records.set(id, record);
    return record;
  }

  /** The receipt's `permissions` field: absent when nothing was asked. */
  receiptField(): { permissions?: PermissionRecord[] } {
    return this.#records.size ? { permissions: [...this.#records.values()] } : {};
  }
}
