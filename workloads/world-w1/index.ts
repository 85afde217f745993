// World W1 (docs/world-w1.md): Effects on a provider the Host does not own and on a web app's form
// in a browser, the Host path beside plain integrations, every count read from the provider's or
// the web app's own records; then replacement after loss with real agents.
import { W1_TRAJECTORIES, W1_WEBAPP_TRAJECTORIES } from './host-path/faults.js';

export { worldW1Demo, type WorldW1Options } from './demo.js';
export { W1_TRAJECTORIES, W1_WEBAPP_TRAJECTORIES, W1_WEBAPP_FAULTS, type W1Trajectory } from './host-path/faults.js';
export { W1ResultRow, type W1Fault, type W1Variant, type W1Operation, type W1Surface } from './baselines/index.js';
export {
  expectationsOf,
  hostExpectation,
  summarise,
  tableOf,
  W1_VARIANTS,
  W1_SURFACES,
  type W1Summary,
} from './compare/table.js';
export { W1_CONTINUATION, w1ContinuationPhase, type W1ContinuationTrajectory } from './continuation/phase.js';
export { runW1Continuation, w1ContinuationText, type W1ContinuationReport } from './continuation/run.js';

/** What `--only` takes: the comparison's trajectories (the provider's, the browser's), and `continuation` (replacement after loss). */
export const W1_PARTS = [...W1_TRAJECTORIES, ...W1_WEBAPP_TRAJECTORIES].map((t) => t.name).concat('continuation');
