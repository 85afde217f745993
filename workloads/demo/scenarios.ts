import { z } from 'zod';
import { CliError, EXIT } from '../../cli/cli-io.js';
import type { SendResult, Supervisor } from '../../kernel/index.js';
import type { Behaviour } from '../hamilton-v1/behaviours.js';
import type { Workload } from '../../cli/workload.js';

/** The demo's scenarios: both replacement orders, the three faults, and the artifact-first case. */
export const SCENARIOS = ['codex-first', 'hermes-first', 'F1', 'F2', 'F3', 'claims-success'] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

/** Harness names the scripted harnesses provide: `codex` (Codex app-server) and `hermes` (an ACP agent). */
export type HarnessName = 'codex' | 'hermes';

export interface ScenarioPlan {
  name: ScenarioName;
  /** What the scenario shows, for the report. */
  title: string;
  diagnoser: HarnessName;
  repairer: HarnessName;
  /** The repairer's behaviour in each repair generation (2, then 3 if the Task is reassigned). */
  repairs: Behaviour[];
  /** Whether the Task must end completed (with an outcome) or waiting (nothing accepted). */
  ends: 'completed' | 'waiting';
}

export const PLANS: Record<ScenarioName, ScenarioPlan> = {
  'codex-first': {
    name: 'codex-first',
    title: 'Codex diagnoses, the ACP agent repairs',
    diagnoser: 'codex',
    repairer: 'hermes',
    repairs: ['repair'],
    ends: 'completed',
  },
  'hermes-first': {
    name: 'hermes-first',
    title: 'the ACP agent diagnoses, Codex repairs',
    diagnoser: 'hermes',
    repairer: 'codex',
    repairs: ['repair'],
    ends: 'completed',
  },
  F1: {
    name: 'F1',
    title: 'stale assignment: generation 1 proposes completion after generation 2 is committed',
    diagnoser: 'hermes',
    repairer: 'codex',
    repairs: ['repair'],
    ends: 'completed',
  },
  F2: {
    name: 'F2',
    title: 'success without artifact: the repair exits 0 without completion.json',
    diagnoser: 'codex',
    repairer: 'hermes',
    repairs: ['repair-without-completion', 'repair'],
    ends: 'completed',
  },
  F3: {
    name: 'F3',
    title: 'response loss: the repair dispatch response is dropped and the supervisor process stops',
    diagnoser: 'codex',
    repairer: 'hermes',
    repairs: ['repair'],
    ends: 'completed',
  },
  'claims-success': {
    name: 'claims-success',
    title: 'artifact-first: the final text claims success while completion.json fails its schema',
    diagnoser: 'hermes',
    repairer: 'codex',
    repairs: ['claim-success'],
    ends: 'waiting',
  },
};

/** The scripted behaviour of a Task's Assignment, given which scenario the Task runs. */
export function behaviourFor(plan: ScenarioPlan, assignment: { purpose: string; generation: number }): Behaviour {
  if (assignment.purpose === 'diagnose') return 'diagnose';
  return plan.repairs[assignment.generation - 2] ?? 'repair';
}

/** What a driving process saw that the store does not say by itself (e.g. the answer to F1's stale send). */
export interface ScenarioFacts {
  staleProposal?: SendResult;
}

/**
 * Drives one Task of `plan` through the supervisor, the way a user's script would: generation 1
 * diagnoses, the Task waits, generation 2 repairs (F1 sends the stale proposal right after it),
 * and a Task left waiting by F2 is reassigned once. `bind` is called with the new Task's id before
 * any Assignment, so the harnesses can pick its behaviour. Resolves when the Task rests.
 */
export async function driveScenario(
  sup: Supervisor,
  workload: Workload,
  plan: ScenarioPlan,
  bind: (taskId: string) => void,
): Promise<{ taskId: string; facts: ScenarioFacts }> {
  const facts: ScenarioFacts = {};
  const { taskId } = await sup.createTask({
    ...workload.spec,
    labels: { ...workload.spec.labels, scenario: plan.name },
  });
  bind(taskId);
  await sup.send(taskId, { type: 'assignment.commit', harness: plan.diagnoser, stage: 'diagnose' });
  await sup.waitFor(taskId, ['waiting']);
  await sup.send(taskId, { type: 'assignment.commit', harness: plan.repairer, stage: 'repair' });
  if (plan.name === 'F1') {
    facts.staleProposal = await sup.send(taskId, {
      type: 'completion.propose',
      generation: 1,
      summary: `${plan.diagnoser} says the task is complete`,
      proposer: plan.diagnoser,
    });
  }
  let rest = await sup.waitFor(taskId, ['completed', 'waiting']);
  for (let generation = 3; rest === 'waiting' && generation <= plan.repairs.length + 1; generation++) {
    await sup.send(taskId, { type: 'assignment.commit', harness: plan.repairer, stage: 'repair' });
    rest = await sup.waitFor(taskId, ['completed', 'waiting']);
  }
  return { taskId, facts };
}

/** The scenarios `--only` names (all when absent), each checked against the workload's: a usage error names the first that is not. */
export function scenariosOf<N extends string>(only: string[] | undefined, all: readonly N[]): N[] {
  if (only === undefined) return [...all];
  const parsed = z
    .array(z.enum(all as readonly [N, ...N[]], { error: `must be one of ${all.join(', ')}` }))
    .min(1)
    .safeParse(only);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const path = `--only${issue.path.map((p) => `[${String(p)}]`).join('')}`;
  throw new CliError('usage', `${path}: ${issue.message}`, { exit: EXIT.usage, path });
}
