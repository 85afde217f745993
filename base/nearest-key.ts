/** Levenshtein distance between `a` and `b` (insertions, deletions and substitutions each count one). */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The known key a mistyped `key` most likely meant: the nearest by edit distance (letter case
 * ignored), if it is within a third of the key's length (at least 1, at most 3) — `frozenTest` for
 * `frozenTests`, `proposeCompletion` for `proposesCompletion` — else undefined: a suggestion far
 * from what was typed misleads more than none.
 */
export function nearestKey(key: string, known: readonly string[]): string | undefined {
  const limit = Math.min(3, Math.max(1, Math.floor(key.length / 3)));
  let best: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { key: candidate, distance };
  }
  return best?.key;
}

/** `unknown key "proposeCompletion" (did you mean "proposesCompletion"?)`, or `unknown key "x"` when no known key is close. */
export function unknownKeyMessage(key: string, known: readonly string[]): string {
  const near = nearestKey(key, known);
  return `unknown key ${JSON.stringify(key)}${near === undefined ? '' : ` (did you mean ${JSON.stringify(near)}?)`}`;
}
