/** Reliability test helpers: the crash loop and the cluster torture (also run by `npm run torture`), store digests, seeded randomness. */
export { runCrashLoop, type CrashLoopOptions, type CrashLoopSummary, type RoundResult } from './crash-loop.js';
export {
  runClusterTorture,
  CLUSTER_TORTURE_DEFAULTS,
  type ClusterFault,
  type ClusterRound,
  type ClusterTortureOptions,
  type ClusterTortureSummary,
} from './cluster-torture.js';
export { DOCUMENTED_CODES } from './documented-codes.js';
export { digestEnv, digestOfRoot, digestOfSupervisor } from './store-digest.js';
export { seededRandom } from './seeded-random.js';
