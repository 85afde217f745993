import type { Finding } from './errors.js';

/**
 * Findings for request/evidence identities claimed by more than one Task (events and index).
 * `indexEntries` gives a kind's claims in key order (as the index stores them), so the owners of
 * one key arrive together: the check holds one key's owners at a time, not the whole index.
 */
export function identityFindings(
  requestOwners: Map<string, Set<string>>,
  indexEntries: (kind: 'request' | 'evidence') => Iterable<{ key: string; taskId: string }>,
): Finding[] {
  const findings: Finding[] = [];
  for (const [id, owners] of requestOwners) if (owners.size > 1) findings.push(identityFinding('request', id, owners));
  for (const kind of ['request', 'evidence'] as const) {
    let key: string | undefined;
    let first = '';
    let owners: Set<string> | undefined;
    const flush = () => {
      if (key !== undefined && owners && !(kind === 'request' && (requestOwners.get(key)?.size ?? 0) > 1))
        findings.push(identityFinding(kind, key, owners));
    };
    for (const entry of indexEntries(kind)) {
      if (entry.key !== key) {
        flush();
        key = entry.key;
        first = entry.taskId;
        owners = undefined;
      } else if (entry.taskId !== first) {
        (owners ??= new Set([first])).add(entry.taskId);
      }
    }
    flush();
  }
  return findings;
}

/** An identity (a request id, an evidence digest) of `kind` claimed by more than one Task. */
export function identityFinding(kind: string, key: string, owners: Set<string>): Finding {
  const list = [...owners].sort();
  return {
    code: 'identity_conflict',
    taskId: list.join(','),
    object: `${kind} ${key}`,
    message: `${kind} ${key} is claimed by tasks ${list.join(', ')}`,
  };
}
