/** The seeded PRNG (mulberry32) the benchmarks use, so a seed means the same sequence everywhere. */
export { seededRandom } from '../../bench/util.js';
