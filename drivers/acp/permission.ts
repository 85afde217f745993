import { z } from 'zod';
import type { PermissionAnswer, PermissionKind } from '../permission-policy.js';
import type { PermissionAsk } from '../permission-route.js';

/** A permission option as offered in `session/request_permission`. */
export interface PermissionOption {
  optionId: string;
  kind: string;
}

export type PermissionOutcome = { outcome: 'selected'; optionId: string } | { outcome: 'cancelled' };

const PREFERENCE = {
  allow: ['allow_once', 'allow_always'],
  refuse: ['reject_once', 'reject_always'],
} as const;

/**
 * Answers a permission request by option `kind`, never by the agent's option ids or labels (they
 * differ per agent: `once`, `approved`, `proceed_once`, …). `allow` picks an allow option,
 * `refuse` and `escalate` a reject option (a run cannot wait for a person: the escalation is
 * recorded and asked after the run). The narrowest option wins (`*_once` before `*_always`); an
 * agent that offers no option of the wanted kind gets `cancelled`, and so does every request once
 * the turn is being cancelled (the ACP schema requires that answer for pending permissions after
 * `session/cancel`).
 */
export function pickPermission(
  options: readonly PermissionOption[],
  answer: PermissionAnswer,
  cancelling: boolean,
): PermissionOutcome {
  if (cancelling) return { outcome: 'cancelled' };
  for (const kind of PREFERENCE[answer === 'allow' ? 'allow' : 'refuse']) {
    const option = options.find((o) => o.kind === kind);
    if (option) return { outcome: 'selected', optionId: option.optionId };
  }
  return { outcome: 'cancelled' };
}

/** ACP `ToolKind` → what the policy weighs (search and think read; move edits; the rest is other). */
const KINDS: Record<string, PermissionKind> = {
  read: 'read',
  search: 'read',
  think: 'read',
  edit: 'edit',
  move: 'edit',
  delete: 'delete',
  execute: 'execute',
  fetch: 'fetch',
};

/** The parts of `session/request_permission`'s `toolCall` the policy reads; agents add more. */
const ToolCall = z.looseObject({
  title: z.string().nullish(),
  kind: z.string().nullish(),
  locations: z.array(z.looseObject({ path: z.string() })).nullish(),
  rawInput: z.unknown().optional(),
  content: z.array(z.looseObject({ type: z.string(), path: z.string().optional() })).nullish(),
});

const RawInput = z.looseObject({
  command: z.union([z.string(), z.array(z.string())]).optional(),
  path: z.string().optional(),
  filePath: z.string().optional(),
  file_path: z.string().optional(),
  abs_path: z.string().optional(),
});

/**
 * What an ACP permission request asks, read from its `toolCall`: the kind, the command of
 * `rawInput.command`, and every path it names (locations, diff contents, `rawInput` path fields).
 * A `toolCall` that does not parse asks for something unknown (`other`, no paths).
 */
export function acpPermissionAsk(toolCall: unknown): PermissionAsk {
  const call = ToolCall.safeParse(toolCall);
  if (!call.success) return { kind: 'other', title: '', command: null, paths: [] };
  const raw = RawInput.safeParse(call.data.rawInput);
  const input = raw.success ? raw.data : {};
  const command = Array.isArray(input.command) ? input.command.join(' ') : (input.command ?? null);
  const paths = [
    ...(call.data.locations ?? []).map((l) => l.path),
    ...(call.data.content ?? []).flatMap((c) => (c.type === 'diff' && c.path !== undefined ? [c.path] : [])),
    ...[input.path, input.filePath, input.file_path, input.abs_path].filter((p) => p !== undefined),
  ];
  return {
    kind: KINDS[call.data.kind ?? ''] ?? 'other',
    title: call.data.title ?? '',
    command,
    paths: [...new Set(paths)],
  };
}
