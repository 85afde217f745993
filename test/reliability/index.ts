/** Reliability test helpers: the crash loop (also run by `npm run torture`), store digests, seeded randomness. */
export { runCrashLoop, type CrashLoopOptions, type CrashLoopSummary, type RoundResult } from './crash-loop.js';
export { DOCUMENTED_CODES } from './documented-codes.js';
export { digestEnv, digestOfRoot, digestOfSupervisor } from './store-digest.js';
export { seededRandom } from './seeded-random.js';
