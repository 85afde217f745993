import type { Zod } from './command.js';

/** One step of `ordivon run`: a stage of the spec and the harness that runs it. */
export interface PlannedStage {
  stage: string;
  harness: string;
}

/** `--stages NAME=HARNESS,…` as the command line gives it: pairs, in order, each stage once (built when parsed). */
export const StagesFlag = (z: Zod) =>
  z
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
