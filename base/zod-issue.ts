import type { ZodError } from 'zod';

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

/** The first issue of `error` under `code`: what every boundary answers for input that does not parse. */
export function zodIssue<C extends string>(code: C, error: ZodError): Issue<C> {
  const issue = error.issues[0];
  if (issue === undefined) return { code, path: '(root)', message: 'invalid input' };
  return { code, path: issuePath(issue.path), message: issue.message };
}

/** Every issue of `error` as `path: message`, joined with `; ` (for messages that name all fields). */
export function describeIssues(error: ZodError): string {
  return error.issues.map((issue) => `${issuePath(issue.path)}: ${issue.message}`).join('; ');
}
