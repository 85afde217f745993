/**
 * Largest-remainder (Hamilton) seat allocation. See SPEC.md.
 * Remainders are compared exactly, as integers (votes × seats mod total), so no floating-point
 * rounding can reorder two parties.
 * @param {number} seats
 * @param {{ name: string, votes: number }[]} parties
 * @returns {{ name: string, seats: number }[]}
 */
export function allocate(seats, parties) {
  if (!Number.isInteger(seats) || seats <= 0) throw new RangeError('seats must be a positive integer');
  const total = parties.reduce((sum, p) => sum + p.votes, 0);
  if (total <= 0) throw new RangeError('at least one party needs votes');

  const rows = parties.map((p, index) => ({
    index,
    name: p.name,
    votes: p.votes,
    seats: Math.floor((p.votes * seats) / total),
    remainder: (p.votes * seats) % total,
  }));
  let left = seats - rows.reduce((sum, r) => sum + r.seats, 0);
  const byLargestRemainder = [...rows].sort(
    (a, b) => b.remainder - a.remainder || b.votes - a.votes || a.name.localeCompare(b.name, 'en'),
  );
  for (let i = 0; left > 0; i++, left--) byLargestRemainder[i].seats += 1;
  return rows.map((r) => ({ name: r.name, seats: r.seats }));
}
