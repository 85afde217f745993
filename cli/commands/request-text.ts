import type { TaskRequestView } from '../../views/index.js';

const HEX = 'sha256:'.length;
const short = (digest: string) => (digest.startsWith('sha256:') ? `${digest.slice(0, HEX + 12)}…` : digest);
const list = (items: string[]) => items.join('; ') || 'none';

/**
 * One DecisionRequest as `ordivon show` prints it: id, about, status, participant and expiry on
 * its heading; then the pending action, the alternatives (those it takes), consequence,
 * reversibility, authority, the Context and world revision it is bound to, and the answer
 * admitted (by whom) or each answer refused with its code.
 */
export function requestLines(r: TaskRequestView): string[] {
  const world = r.worldRevision.map((s) => `${s.sourceId} ${short(s.digest)}`).join(', ') || 'none';
  const lines = [
    `  request ${r.requestId}  ${r.about}  ${r.status}  for ${r.participant}  ${r.expiresAt ? `expires ${r.expiresAt}` : 'no deadline'}`,
    `    pending action: ${r.pendingAction}`,
    `    alternatives: ${r.alternatives.map((a) => `${a.id} (${a.summary})`).join(', ')}; takes ${r.allowed.join(', ')}`,
    `    consequence: ${r.consequence || '-'}; ${r.reversibility}; authority ${r.authority || '-'}; budget ${r.budgetImpact || '-'}; cost of delay ${r.costOfDelay || '-'}`,
    `    evidence: ${list(r.evidence)}; unresolved: ${list(r.unresolvedClaims)}; revoked when: ${list(r.revokedWhen)}`,
    `    bound to generation ${r.generation}, context ${r.contextDigest ? short(r.contextDigest) : 'none'}, world ${world}`,
  ];
  if (r.answered)
    lines.push(
      `    answered ${r.answered.answer} by ${r.answered.answeredBy} at r${r.answered.revision} ${r.answered.at}` +
        (r.answered.note ? ` (${r.answered.note})` : ''),
    );
  for (const refused of r.refusals)
    lines.push(`    refused r${refused.revision} ${refused.answer} by ${refused.answeredBy}: ${refused.code ?? '-'}`);
  return lines;
}
