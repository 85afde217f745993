import { z } from 'zod';
import { unknownKeyMessage } from './nearest-key.js';

/**
 * `z.strictObject(shape)` whose unknown key is reported as `unknown key "x" (did you mean "y"?)`
 * naming the nearest of the shape's keys; `zodIssue` puts the key itself at the end of the path.
 * For input at a boundary: a typo there would otherwise be dropped and the field it meant left at
 * its default.
 */
export function strictObject<S extends z.ZodRawShape>(shape: S): z.ZodObject<S, z.core.$strict> {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys' ? unknownKeyMessage(String(issue.keys[0]), known) : undefined,
  });
}
