/**
 * Largest-remainder (Hamilton) seat allocation. See SPEC.md.
 * @param {number} seats
 * @param {{ name: string, votes: number }[]} parties
 * @returns {{ name: string, seats: number }[]}
 */
export function allocate(seats, parties) {
  if (!Number.isInteger(seats) || seats <= 0) throw new RangeError('seats must be a positive integer');
  const total = parties.reduce((sum, p) => sum + p.votes, 0);
  if (total <= 0) throw new RangeError('at least one party needs votes');

  const rows = parties.map((p, index) => {
    const quota = (p.votes * seats) / total;
    const whole = Math.floor(quota);
    return { index, name: p.name, votes: p.votes, seats: whole, remainder: quota - whole };
  });

  let left = seats - rows.reduce((sum, r) => sum + r.seats, 0);
  const order = [...rows].sort(
    (a, b) => a.remainder - b.remainder || b.votes - a.votes || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
  );
  for (const row of order) {
    if (left === 0) break;
    row.seats += 1;
    left -= 1;
  }
  return rows.map((r) => ({ name: r.name, seats: r.seats }));
}
