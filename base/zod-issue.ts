import type { ZodError, core } from 'zod';

/** A failed parse as data: the caller's code, the path of the first offending field, and zod's message. */
export interface Issue<C extends string = string> {
  code: C;
  path: string;
  message: string;
}

/** Formats a zod issue path the way every boundary reports it: `data.evidence.report.json`, or `(root)`. */
export function issuePath(path: ReadonlyArray<PropertyKey>): string {
  return path.map(String).join('.') || '(root)';
}

/**
 * One issue's path and message: an unknown key is reported at its own path
 * (`stages.0.proposeCompletion`, where zod names the object holding it); a schema made by
 * `strictObject` (base/strict-object.ts) words its message with the nearest known key.
 */
function located(issue: core.$ZodIssue): { path: string; message: string } {
  if (issue.code === 'unrecognized_keys' && issue.keys[0] !== undefined)
    return { path: issuePath([...issue.path, issue.keys[0]]), message: issue.message };
  return { path: issuePath(issue.path), message: issue.message };
}

/**
 * The first issue of `error` under `code`: what every boundary answers for input that does not
 * parse. An unknown key comes first: a required field mistyped is both missing and unknown, and
 * the unknown key's message names the field it meant.
 */
export function zodIssue<C extends string>(code: C, error: ZodError): Issue<C> {
  const issue = error.issues.find((i) => i.code === 'unrecognized_keys') ?? error.issues[0];
  if (issue === undefined) return { code, path: '(root)', message: 'invalid input' };
  return { code, ...located(issue) };
}

/** Every issue of `error` as `path: message`, joined with `; ` (for messages that name all fields). */
export function describeIssues(error: ZodError): string {
  return error.issues
    .map((issue) => {
      const { path, message } = located(issue);
      return `${path}: ${message}`;
    })
    .join('; ');
}
