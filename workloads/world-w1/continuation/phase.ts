import { join } from 'node:path';
import type { TaskSpecInput } from '../../../objects/index.js';
import type { Io } from '../../../cli/cli-io.js';
import type { AcpAgent } from '../../shared/harnesses.js';
import {
  CONTINUATION_ORDERS,
  FIRST_CHOICES,
  continuationPhase,
  continuationStages,
  type ContinuationTrajectory,
  type FirstChoice,
} from '../../shared/continuation.js';
import { providerEffectAdapter, putTarget, type Operation } from '../provider/index.js';
import { W1_WORLD, providerAction } from '../host-path/spec.js';
import { W1_ANSWER_WAIT_MS } from '../host-path/provider-surface.js';

/**
 * Replacement after loss on World W1 (shared/continuation.ts): A (Codex or the ACP agent) decides
 * `perform`, the provider commits and drops the answer, the Host process exits; a fresh process
 * with B (the other one) continues from the Task's bounded state alone. Each order runs one
 * trajectory per provider shape, B's first choice differing: an order (a lookup by key answers),
 * a transfer (its provider id never came back: the lookup cannot say) and a message (no lookup).
 */
export interface W1ContinuationTrajectory extends ContinuationTrajectory {
  operation: Operation;
}

/** The operation each first choice is tried on: one per provider shape. */
const SHAPE: Record<FirstChoice, Operation> = {
  reconcile: 'orders',
  redispatch: 'transfers',
  'classify-failed': 'messages',
};

export const W1_CONTINUATION: readonly W1ContinuationTrajectory[] = CONTINUATION_ORDERS.flatMap(({ order, a, b }) =>
  FIRST_CHOICES.map((first) => ({ name: `${order}-${SHAPE[first]}-${first}`, a, b, first, operation: SHAPE[first] })),
);

/** The Effect of a trajectory: its operation on a target of its own, counted by its reference. */
export function continuationEffect(t: Pick<W1ContinuationTrajectory, 'name' | 'operation'>) {
  return { operation: t.operation, target: `w1/continuation/${t.name}`, reference: `w1-continuation-${t.name}` };
}

const SUPPORT = ['policy'];

/** The continuation Task on World W1: `act` performs the operation; `continue` decides after the loss. */
export function w1ContinuationSpec(t: W1ContinuationTrajectory): TaskSpecInput {
  const effect = continuationEffect(t);
  return {
    title: `Perform ${effect.operation} on ${effect.target} once, across a lost answer (${t.name})`,
    goal: `Perform the provider operation ${effect.operation} on ${effect.target} exactly once.`,
    world: W1_WORLD,
    sources: [{ id: 'policy', path: 'POLICY.md', in: 'world', trust: 'trusted', description: 'what may be performed' }],
    requiredArtifacts: [{ name: 'decision.json', kind: 'json', schema: 'decision' }],
    stages: continuationStages({
      first: {
        name: 'act',
        instructions:
          'Choose one of the candidates and write decision.json; the Host performs it through the provider.',
        perform: {
          id: 'perform',
          summary: `${effect.operation} ${effect.target} through the provider`,
          supportedBy: SUPPORT,
          action: providerAction(effect, 'decision'),
        },
      },
      artifact: 'decision.json',
      support: SUPPORT,
      lost: `An earlier request to ${effect.operation} ${effect.target} got no answer: the provider may or may not have performed it.`,
    }),
    labels: { workload: 'world-w1', trajectory: t.name },
  };
}

/**
 * One half of the W1 continuation in its own process (`ordivon demo --workload world-w1
 * --continuation-phase lose|continue --provider URL`), on the provider at `providerUrl`.
 */
export function w1ContinuationPhase(
  phase: 'lose' | 'continue',
  options: { state: string; acpAgent: AcpAgent; providerUrl: string },
  io: Io,
): Promise<number> {
  return continuationPhase(
    phase,
    {
      trajectories: W1_CONTINUATION,
      firstStage: 'act',
      choices: {
        maintain: { candidateId: 'perform', rationale: 'The policy names this operation; the Host performs it once.' },
        redispatch: { candidateId: 'redispatch', rationale: 'No receipt came back, so send it again.' },
        'classify-failed': { candidateId: 'classify-failed', rationale: 'No receipt came back, so it did not happen.' },
      },
      effectAdapters: {
        provider: providerEffectAdapter({
          url: options.providerUrl,
          idFile: join(options.state, 'transfer-ids.jsonl'),
          timeoutMs: W1_ANSWER_WAIT_MS,
        }),
      },
      specOf: async (t) => {
        await putTarget(options.providerUrl, continuationEffect(t).target, { revision: 1 });
        return w1ContinuationSpec(t);
      },
    },
    options,
    io,
  );
}
