import { z } from 'zod';
import type { ServerRequestReply } from './codex-connection.js';
import type { ServerRequest } from './codex-wire.js';
import { JSONRPC_METHOD_NOT_FOUND } from './errors.js';

export type ApprovalPolicy = 'accept' | 'decline';

const PermissionsParams = z.looseObject({
  permissions: z.looseObject({ network: z.unknown().optional(), fileSystem: z.unknown().optional() }),
});

/** Server requests that are approvals: the Host's policy answers them. */
export const APPROVAL_METHODS = [
  'item/commandExecution/requestApproval',
  'item/fileChange/requestApproval',
  'item/permissions/requestApproval',
  'execCommandApproval',
  'applyPatchApproval',
] as const;

/**
 * The reply to one server request, decided by the run's approval policy. Pure: no I/O, so the
 * same request and policy always give the same reply.
 *
 * - command / file-change approvals: `{decision: "accept" | "decline"}` (v2 decisions);
 * - permission requests: accept grants exactly what was asked for this turn, decline grants nothing;
 * - legacy v1 approvals (`execCommandApproval`, `applyPatchApproval`): `"approved"` / `{denied}`;
 * - MCP elicitations ask a *person* for input the Host does not have: always `decline`;
 * - anything else (user-input questions, dynamic tool calls, auth refresh, attestation, methods
 *   added later): a JSON-RPC `-32601` error, so the turn never waits on an unanswered request.
 */
export function answerServerRequest(request: ServerRequest, policy: ApprovalPolicy): ServerRequestReply {
  const accept = policy === 'accept';
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
        result: { decision: accept ? 'approved' : { denied: { rejection: 'declined by the Host approval policy' } } },
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
