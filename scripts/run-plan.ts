import { z } from 'zod';
import { stageNamed, type TaskSpec } from '../objects/index.js';
import type { EventRecord } from '../store/index.js';
import { CliError, EXIT } from './cli-io.js';

/** One step of `ordivon run`: a stage of the spec and the harness that runs it. */
export interface PlannedStage {
  stage: string;
  harness: string;
}

/** `--stages NAME=HARNESS,…` as the command line gives it: pairs, in order, each stage once. */
export const StagesFlag = z
  .string({ error: 'required: NAME=HARNESS,… (the stages to run, in order)' })
  .transform((text) => text.split(',').map((pair) => pair.trim()))
  .pipe(
    z
      .array(
        z
          .string()
          .regex(/^[^=\s]+=[^=\s]+$/, 'must be NAME=HARNESS')
          .transform((pair): PlannedStage => {
            const [stage, harness] = pair.split('=') as [string, string];
            return { stage, harness };
          }),
      )
      .min(1)
      .superRefine((plan, ctx) => {
        plan.forEach((step, i) => {
          if (plan.findIndex((other) => other.stage === step.stage) !== i)
            ctx.addIssue({ code: 'custom', path: [i], message: `stage ${step.stage} is named twice` });
        });
      }),
  );

/**
 * Checks the plan against the spec and the configured harnesses before anything is opened: a
 * stage the spec does not declare is `stage_unknown`, a harness the configuration does not name is
 * `harness_unknown`; both exit 2 with `path` `--stages[i]`.
 */
export function checkPlan(plan: PlannedStage[], spec: TaskSpec, harnesses: readonly string[]): void {
  plan.forEach(({ stage, harness }, i) => {
    if (!stageNamed(spec, stage))
      throw new CliError('stage_unknown', `--stages[${i}]: the spec has no stage ${stage}`, {
        exit: EXIT.usage,
        path: `--stages[${i}]`,
      });
    if (!harnesses.includes(harness))
      throw new CliError(
        'harness_unknown',
        `--stages[${i}]: no harness named ${harness} is configured${harnesses.length > 0 ? ` (configured: ${harnesses.join(', ')})` : ' (no ordivon.config.json here; give --config FILE)'}`,
        { exit: EXIT.usage, path: `--stages[${i}]` },
      );
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
