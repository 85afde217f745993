import { readFileSync } from 'node:fs';
import { z } from 'zod';

/** The fields of the package's own package.json that the CLI and the service report. */
const PackageJson = z.object({ name: z.string(), version: z.string().min(1) });

let version: string | undefined;

/**
 * The version of this package, read once from its package.json (two levels above this file in
 * `dist/scripts/`, the package root in a clone and in an installed package alike).
 */
export function packageVersion(): string {
  version ??= PackageJson.parse(
    JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')),
  ).version;
  return version;
}
