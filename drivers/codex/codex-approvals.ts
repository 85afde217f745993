import { z } from 'zod';
import type { PermissionAnswer } from '../permission-policy.js';
import type { PermissionAsk } from '../permission-route.js';
import type { ServerRequestReply } from './codex-connection.js';
import type { ServerNotification, ServerRequest } from './codex-wire.js';
import { JSONRPC_METHOD_NOT_FOUND } from './errors.js';

const PermissionsParams = z.looseObject({
  permissions: z.looseObject({ network: z.unknown().optional(), fileSystem: z.unknown().optional() }),
});

/** Server requests that are approvals: the run's permission policy answers them. */
export const APPROVAL_METHODS = [
  'item/commandExecution/requestApproval',
  'item/fileChange/requestApproval',
  'item/permissions/requestApproval',
  'execCommandApproval',
  'applyPatchApproval',
] as const;
const APPROVALS: ReadonlySet<string> = new Set(APPROVAL_METHODS);

/** Whether `method` is an approval the permission policy answers. */
export const isApproval = (method: string): boolean => APPROVALS.has(method);

const Change = z.looseObject({ path: z.string(), kind: z.looseObject({ type: z.string() }).optional() });
const FileChangeItem = z.looseObject({
  item: z.looseObject({ type: z.literal('fileChange'), id: z.string(), changes: z.array(Change) }),
});
const CommandParams = z.looseObject({
  command: z.union([z.string(), z.array(z.string())]).nullish(),
  cwd: z.string().nullish(),
  reason: z.string().nullish(),
});
const FileChangeParams = z.looseObject({
  itemId: z.string().optional(),
  grantRoot: z.string().nullish(),
  reason: z.string().nullish(),
});
const PatchParams = z.looseObject({ fileChanges: z.record(z.string(), z.unknown()).optional() });

/**
 * What each Codex approval asks, as the policy's evidence needs it. A v2 file-change approval
 * names only its item: the paths come from that item's `item/started` (`fileChange.changes`), so
 * the notifications are observed first. Params that do not parse ask for something unknown.
 */
export class CodexAsks {
  readonly #changes = new Map<string, { paths: string[]; deletes: boolean }>();

  observe(notification: ServerNotification): void {
    if (notification.method !== 'item/started') return;
    const parsed = FileChangeItem.safeParse(notification.params);
    if (!parsed.success) return;
    const { id, changes } = parsed.data.item;
    this.#changes.set(id, {
      paths: changes.map((c) => c.path),
      deletes: changes.some((c) => c.kind?.type === 'delete'),
    });
  }

  ask(request: ServerRequest): PermissionAsk {
    const unknown: PermissionAsk = { kind: 'other', title: request.method, command: null, paths: [] };
    switch (request.method) {
      case 'item/commandExecution/requestApproval':
      case 'execCommandApproval': {
        const p = CommandParams.safeParse(request.params);
        if (!p.success) return unknown;
        const command = Array.isArray(p.data.command) ? p.data.command.join(' ') : (p.data.command ?? null);
        return {
          kind: 'execute',
          title: p.data.reason ?? 'run a command',
          command,
          paths: p.data.cwd ? [p.data.cwd] : [],
        };
      }
      case 'item/fileChange/requestApproval': {
        const p = FileChangeParams.safeParse(request.params);
        if (!p.success) return unknown;
        const item = p.data.itemId === undefined ? undefined : this.#changes.get(p.data.itemId);
        const paths = [...(item?.paths ?? []), ...(p.data.grantRoot ? [p.data.grantRoot] : [])];
        return {
          kind: item?.deletes ? 'delete' : 'edit',
          title: p.data.reason ?? 'change files',
          command: null,
          paths,
        };
      }
      case 'applyPatchApproval': {
        const p = PatchParams.safeParse(request.params);
        if (!p.success) return unknown;
        return { kind: 'edit', title: 'apply a patch', command: null, paths: Object.keys(p.data.fileChanges ?? {}) };
      }
      case 'item/permissions/requestApproval': {
        const p = PermissionsParams.safeParse(request.params);
        if (!p.success) return unknown;
        const network = p.data.permissions.network != null;
        return { kind: network ? 'fetch' : 'other', title: 'widen the sandbox', command: null, paths: [] };
      }
      default:
        return unknown;
    }
  }
}

const REJECTIONS = {
  refuse: "refused: the Task's authority forbids it",
  escalate: 'declined for now: the Host asks a person after this run',
} as const;

/**
 * The reply to one server request. Approvals carry the policy's `answer`: `allow` accepts, `refuse`
 * and `escalate` decline (a run cannot wait for a person; the escalation is asked after the run).
 * Pure: no I/O, so the same request and answer always give the same reply.
 *
 * - command / file-change approvals: `{decision: "accept" | "decline"}` (v2 decisions);
 * - permission requests: allow grants exactly what was asked for this turn, otherwise nothing;
 * - legacy v1 approvals (`execCommandApproval`, `applyPatchApproval`): `"approved"` / `{denied}`;
 * - MCP elicitations ask a *person* for input the Host does not have: always `decline`;
 * - anything else (user-input questions, dynamic tool calls, auth refresh, attestation, methods
 *   added later): a JSON-RPC `-32601` error, so the turn never waits on an unanswered request.
 */
export function answerServerRequest(request: ServerRequest, answer: PermissionAnswer): ServerRequestReply {
  const accept = answer === 'allow';
  switch (request.method) {
    case 'item/commandExecution/requestApproval':
    case 'item/fileChange/requestApproval':
      return { result: { decision: accept ? 'accept' : 'decline' } };
    case 'item/permissions/requestApproval': {
      const parsed = PermissionsParams.safeParse(request.params);
      if (!accept || !parsed.success) return { result: { permissions: {}, scope: 'turn' } };
      const granted: Record<string, unknown> = {};
      const { network, fileSystem } = parsed.data.permissions;
      if (network !== undefined && network !== null) granted['network'] = network;
      if (fileSystem !== undefined && fileSystem !== null) granted['fileSystem'] = fileSystem;
      return { result: { permissions: granted, scope: 'turn' } };
    }
    case 'execCommandApproval':
    case 'applyPatchApproval':
      return {
        result: { decision: accept ? 'approved' : { denied: { rejection: REJECTIONS[answer] } } },
      };
    case 'mcpServer/elicitation/request':
      return { result: { action: 'decline', content: null, _meta: null } };
    default:
      return {
        error: {
          code: JSONRPC_METHOD_NOT_FOUND,
          message: `the Ordivon codex driver does not serve ${request.method} (headless run)`,
        },
      };
  }
}
