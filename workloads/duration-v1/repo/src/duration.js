'use strict';

const UNITS = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 };

/** Parses "1h30m", "45s", "250ms" or "2h5m10s" into milliseconds (SPEC.md). */
function parseDuration(text) {
  if (typeof text !== 'string' || text.trim() === '') throw new TypeError('expected a duration such as 1h30m');
  const source = text.trim();
  const part = /(\d+)(h|m|s|ms)/y;
  let total = 0;
  let at = 0;
  while (at < source.length) {
    part.lastIndex = at;
    const match = part.exec(source);
    if (!match) throw new SyntaxError(`cannot read "${source.slice(at)}" in ${text}`);
    total += Number(match[1]) * UNITS[match[2]];
    at = part.lastIndex;
  }
  return total;
}

module.exports = { parseDuration };
