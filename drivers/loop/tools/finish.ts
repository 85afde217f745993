import { z } from 'zod';
import { tool } from './outcome.js';

const Input = z.strictObject({
  summary: z.string().min(1).describe('What was done, what was left, and how it was checked.'),
});

export const finish = tool({
  name: 'finish',
  description:
    "Ends the run: call it once the task is done (or cannot be done), with a summary of what was done, what was left and how it was checked. The Host then checks the workspace itself; the summary is the run's own account, not its proof.",
  input: Input,
  // It changes no file, but it is the run's end: the loop records it, it is not replayed.
  readOnly: false,
  run: (input) => ({ ok: true, output: 'finished', finish: { summary: input.summary } }),
});
