// World W1 (docs/world-w1.md): Effects on a provider the Host does not own, the Host path beside
// three plain integrations, every count read from the provider's own records; then replacement
// after loss with real agents.
import { W1_TRAJECTORIES } from './host-path/faults.js';

export { worldW1Demo, type WorldW1Options } from './demo.js';
export { W1_TRAJECTORIES, type W1Trajectory } from './host-path/faults.js';
export { W1ResultRow, type W1Fault, type W1Variant } from './baselines/index.js';
export { expectationsOf, hostExpectation, summarise, tableOf, W1_VARIANTS, type W1Summary } from './compare/table.js';
export { W1_CONTINUATION, w1ContinuationPhase, type W1ContinuationTrajectory } from './continuation/phase.js';
export { runW1Continuation, w1ContinuationText, type W1ContinuationReport } from './continuation/run.js';

/** What `--only` takes: the comparison's trajectories, and `continuation` (replacement after loss). */
export const W1_PARTS = [...W1_TRAJECTORIES.map((t) => t.name), 'continuation'];
