/** The benchmark suite (issue 7): generator, scenarios, SQLite peer and runner helpers. */
export {
  generateRoot,
  writeWorkload,
  cacheDirectory,
  WORKLOAD_VERSION,
  type GenerateOptions,
  type GeneratedRoot,
  type Target,
} from './generate.js';
export { planTask, materialize, benchTaskId, BENCH_SPEC, type Step, type StepKind } from './workload.js';
export { SqlitePeerStore, asKernelStore, type KernelStore } from './peers/sqlite-peer-store.js';
export { rebuildPeer, rebuildPeerParallel } from './peers/sqlite-peer-recovery.js';
export { runRecoveryBench, timedBoot, timedRebuild } from './recovery.bench.js';
export { runFloorBench, scanFloor, stepFloor } from './floors/floor.bench.js';
export { machineEvents } from './machine-events.js';
export { runCheckpointBench, checkpointFloor } from './checkpoint.bench.js';
export { rewindCheckpoints } from './checkpoint-rewind.js';
export { runAdmissionBench } from './admission.bench.js';
export { runClusterBench } from './cluster/cluster.bench.js';
export { runPeerBench, peerBoot, peerFloor } from './peers/peer.bench.js';
export { runReconciliationHook } from './reconciliation-hook.js';
export { runDiskFloorBench, fdatasyncFloor, lmdbPutFloor } from './floors/disk-floor.bench.js';
export { runTemporalPeerBench, taskHistory, temporalReplay } from './peers/temporal-peer.bench.js';
export { baselineRebuildAll } from './baseline-rebuild.js';
export { runStartupBench, timedNode, timingOf, CLI_ENTRY, STARTUP_RUNS } from './startup.bench.js';
export { copyStateRoot, removeStateCopy } from './state-copy.js';
export {
  runSuite,
  resolvable,
  scenarioNeeds,
  SCENARIOS,
  type Scenario,
  type Skipped,
  type SuiteOptions,
  type SuiteRun,
  type BenchResults,
} from './suite.js';
export { headline, type Headline } from './report/headline.js';
export { recoveryPlot, type Series } from './report/plot.js';
export { seededRandom, randomHex, timeIt, machine, type Timing } from './util.js';
export type { BenchRow, BenchContext, GivenHistory, Size } from './report/results-model.js';
