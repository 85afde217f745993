import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** True under CI (`CI=true`, as .ci/run and most CI services set it). */
export function underCi(env: NodeJS.ProcessEnv = process.env): boolean {
  return ['true', '1'].includes((env['CI'] ?? '').toLowerCase());
}

/** The first of `candidates` that is an executable file: an absolute path as it is, a bare name looked up on PATH. */
export function findExecutable(
  candidates: Array<string | undefined>,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const executable = (path: string) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  for (const candidate of candidates) {
    if (!candidate) continue;
    if (candidate.includes('/')) {
      if (executable(candidate)) return candidate;
      continue;
    }
    const hit = (env['PATH'] ?? '')
      .split(delimiter)
      .filter(Boolean)
      .map((dir) => join(dir, candidate))
      .find(executable);
    if (hit) return hit;
  }
  return undefined;
}

/** A part of the machine a test needs but `npm install` does not bring (a browser, a system binary). */
export interface OptionalPart {
  /** Where it was found, if it was. */
  path: string | undefined;
  /** node:test's `skip` option: the reason when it is missing on a developer's machine, else false. */
  skip: string | false;
  /** Its path; throws (fails the test) with the reason when it is missing, which only happens under CI. */
  need(): string;
}

/**
 * An optional part: missing on a developer's machine, the test is skipped and the reason printed
 * (node:test reports `# <reason>`); missing under `CI=true`, where .ci/run installs every part, the
 * test is not skipped and fails at `need()` with the same reason, so CI cannot pass by skipping it.
 */
export function optionalPart(what: string, path: string | undefined, howToGet: string): OptionalPart {
  const reason = `${what} not found: ${howToGet}`;
  return {
    path,
    skip: path !== undefined || underCi() ? false : reason,
    need() {
      if (path === undefined) throw new Error(`CI=true, and ${reason}`);
      return path;
    },
  };
}
