'use strict';

/** The arithmetic mean of numbers; 0 for none. */
function mean(numbers) {
  let total = 0;
  for (const n of numbers) total += n;
  return total / numbers.length;
}

module.exports = { mean };
