import { DEFAULT_STAGE, stageNamed, stagesOf, type Stage, type TaskSpec } from '../objects/index.js';
import type { TaskHandle } from './frontier-runner.js';
import type { Refusal } from './event-input.js';

/**
 * Which stage of its Task's spec an Assignment runs, from what the caller sent: `stage`, or
 * (callers written before stages) a `purpose` that names a stage. A spec without stages has one
 * stage, `work`, and keeps the caller's purpose. Without a spec (a bare kernel), nothing is checked.
 */
export function resolveStage(
  spec: TaskSpec | undefined,
  sent: { stage?: string | undefined; purpose?: string | undefined },
): { stage: string | undefined; purpose: string } | { refusal: Refusal } {
  if (spec === undefined) {
    const purpose = sent.purpose ?? sent.stage;
    if (purpose === undefined) return { refusal: { code: 'invalid_event', detail: 'name a stage', path: 'stage' } };
    return { stage: sent.stage, purpose };
  }
  if (spec.stages === undefined) {
    if (sent.stage !== undefined && sent.stage !== DEFAULT_STAGE) return { refusal: stageUnknown(spec, sent.stage) };
    return { stage: DEFAULT_STAGE, purpose: sent.purpose ?? DEFAULT_STAGE };
  }
  const name = sent.stage ?? sent.purpose;
  if (name === undefined)
    return { refusal: { code: 'stage_unknown', detail: `name a stage: ${stageList(spec)}`, path: 'stage' } };
  const stage = stageNamed(spec, name);
  if (!stage) return { refusal: stageUnknown(spec, name) };
  return { stage: stage.name, purpose: sent.purpose ?? stage.purpose ?? stage.name };
}

function stageList(spec: TaskSpec): string {
  return stagesOf(spec)
    .map((s) => s.name)
    .join(', ');
}

function stageUnknown(spec: TaskSpec, name: string): Refusal {
  return { code: 'stage_unknown', detail: `the spec has no stage ${name} (stages: ${stageList(spec)})`, path: 'stage' };
}

/**
 * The stage the Task's current Assignment runs. Assignments written before stages name none: they
 * run the spec's stage named like their purpose, else the spec's only stage, else one that
 * produces every artifact and proposes completion.
 */
export function assignedStage(task: TaskHandle): Stage {
  const assignment = task.context.assignment!;
  const body = task.store.getObject<{ stage?: string; purpose: string }>(assignment.digest, 'assignment').body;
  const stages = stagesOf(task.spec);
  return (
    stageNamed(task.spec, body.stage ?? body.purpose) ??
    (stages.length === 1
      ? stages[0]!
      : {
          name: body.stage ?? body.purpose,
          instructions: '',
          produces: task.spec.requiredArtifacts.map((a) => a.name),
          proposesCompletion: true,
        })
  );
}
