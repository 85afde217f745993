import { readFileSync } from 'node:fs';

let version: string | undefined;

/**
 * The version of this package, read once from its package.json (two levels above this file in
 * `dist/cli/`, the package root in a clone and in an installed package alike). Its `name` and
 * `version` are checked by hand, not with zod, so that `ordivon --version` loads no schema library.
 */
export function packageVersion(): string {
  version ??= versionOf(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  return version;
}

/** The `version` of a package.json's text; throws, naming the field, when it or `name` is not a non-empty string. */
export function versionOf(text: string): string {
  const json: unknown = JSON.parse(text);
  const fields = json !== null && typeof json === 'object' ? (json as Record<string, unknown>) : {};
  for (const field of ['name', 'version'])
    if (typeof fields[field] !== 'string' || fields[field] === '')
      throw new Error(`package.json: ${field} must be a non-empty string (got ${JSON.stringify(fields[field])})`);
  return fields.version as string;
}
