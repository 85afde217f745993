import { stageNamed, type TaskSpec } from '../objects/index.js';
import type { EventRecord } from '../store/index.js';
import { CliError, EXIT } from './cli-io.js';
import type { PlannedStage } from './stages-flag.js';

/**
 * Checks the plan against the spec and the configured harnesses before anything is opened: a
 * stage the spec does not declare is `stage_unknown`, a harness the configuration does not name is
 * `harness_unknown`, a stage with a token or turn budget planned on a harness that is not Loop v0
 * is `budget_unsupported`; each exits 2 with `path` `--stages[i]`.
 */
export function checkPlan(
  plan: PlannedStage[],
  spec: TaskSpec,
  harnesses: Readonly<Record<string, { driver: string }>>,
): void {
  const names = Object.keys(harnesses);
  plan.forEach(({ stage, harness }, i) => {
    const declared = stageNamed(spec, stage);
    if (!declared)
      throw new CliError('stage_unknown', `--stages[${i}]: the spec has no stage ${stage}`, {
        exit: EXIT.usage,
        path: `--stages[${i}]`,
      });
    // `a+b+c` runs parallel Attempts (docs/branch-and-join.md); a stage naming `parallel` runs its own.
    const named = harness.includes('+') ? harness.split('+') : [harness];
    if (named.length > 1 && (declared.fanOut || declared.decision))
      throw new CliError(
        'branch_invalid',
        `--stages[${i}]: stage ${stage} ${declared.fanOut ? 'fans out to one harness' : 'is a decision stage'}; it runs no parallel Attempts`,
        { exit: EXIT.usage, path: `--stages[${i}]` },
      );
    for (const name of named.length > 1 ? named : [...(declared.parallel ?? []), harness]) {
      const configured = Object.hasOwn(harnesses, name) ? harnesses[name] : undefined;
      if (configured === undefined)
        throw new CliError(
          'harness_unknown',
          `--stages[${i}]: no harness named ${name} is configured${names.length > 0 ? ` (configured: ${names.join(', ')})` : ' (no ordivon.config.json here; give --config FILE)'}`,
          { exit: EXIT.usage, path: `--stages[${i}]` },
        );
      const { budget } = declared;
      if ((budget?.tokens !== undefined || budget?.turns !== undefined) && configured.driver !== 'loop')
        throw new CliError(
          'budget_unsupported',
          `--stages[${i}]: stage ${stage} has a token or turn budget, which only a harness of driver loop keeps; ${name} is driver ${configured.driver}`,
          { exit: EXIT.usage, path: `--stages[${i}]` },
        );
    }
  });
}

type Event = { revision: number } & Pick<EventRecord, 'type' | 'data' | 'disposition'>;

/** Where a stage stands in a Task's durable history. */
export interface StageStatus {
  /** The generation of the stage's latest admitted Assignment, if any. */
  generation: number | null;
  /** True when a generation of the stage settled with every artifact it produces held, or completed the Task. */
  done: boolean;
}

/**
 * A stage's status, read from the Task's events alone (what any later process sees the same
 * way): its Assignments (`assignment.commit` naming the stage), and whether one of them ended it:
 * `evaluation.settle` with nothing missing for a stage that settles, the outcome's
 * `verification.record` (passed) for one that proposes completion.
 */
export function stageStatus(events: Iterable<Event>, stage: string): StageStatus {
  const generations = new Set<number>();
  let generation: number | null = null;
  let done = false;
  for (const event of events) {
    if (!event.disposition.admitted) continue;
    const data = event.data as { generation?: number; stage?: string; purpose?: string; missing?: string[] };
    if (event.type === 'assignment.commit' && (data.stage ?? data.purpose) === stage && data.generation) {
      generations.add(data.generation);
      generation = data.generation;
    } else if (data.generation !== undefined && generations.has(data.generation)) {
      if (event.type === 'evaluation.settle' && (data.missing ?? []).length === 0) done = true;
      if (event.type === 'verification.record' && (event.data as { passed?: boolean }).passed === true) done = true;
    }
  }
  return { generation, done };
}
