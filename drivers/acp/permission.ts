/** A permission option as offered in `session/request_permission`. */
export interface PermissionOption {
  optionId: string;
  kind: string;
}

export type PermissionOutcome = { outcome: 'selected'; optionId: string } | { outcome: 'cancelled' };

const PREFERENCE = {
  accept: ['allow_once', 'allow_always'],
  decline: ['reject_once', 'reject_always'],
} as const;

/**
 * Answers a permission request from the run's approval policy by option `kind`, never by the
 * agent's option ids or labels (they differ per agent: `once`, `approved`, `proceed_once`, …).
 * The narrowest option wins (`*_once` before `*_always`); an agent that offers no option of the
 * wanted kind gets `cancelled`, and so does every request once the turn is being cancelled (the
 * ACP schema requires that answer for pending permissions after `session/cancel`).
 */
export function pickPermission(
  options: readonly PermissionOption[],
  policy: 'accept' | 'decline',
  cancelling: boolean,
): PermissionOutcome {
  if (cancelling) return { outcome: 'cancelled' };
  for (const kind of PREFERENCE[policy]) {
    const option = options.find((o) => o.kind === kind);
    if (option) return { outcome: 'selected', optionId: option.optionId };
  }
  return { outcome: 'cancelled' };
}
