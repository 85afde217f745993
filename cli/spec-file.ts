import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { SPEC_MAX_BYTES } from '../objects/index.js';
import { CliError, EXIT, parseJson } from './cli-io.js';

/**
 * Reads a Task spec file as the CLI takes it: `spec_unreadable` (path `--spec`), `invalid_spec`
 * (path `--spec`) for a file over `SPEC_MAX_BYTES`, found before it is read, or `invalid_json`
 * (exit 2). A relative `workspaceSeed` or `world` names a directory beside the spec file, as a
 * user writing the spec next to their repository means it, and is made absolute here.
 */
export function readSpecFile(file: string): unknown {
  let text: string;
  try {
    const { size } = statSync(file);
    if (size > SPEC_MAX_BYTES)
      throw new CliError(
        'invalid_spec',
        `${file} holds ${size} bytes; a spec may hold at most ${SPEC_MAX_BYTES} (1 MiB)`,
        {
          exit: EXIT.usage,
          path: '--spec',
        },
      );
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError('spec_unreadable', `cannot read ${file}: ${(error as Error).message}`, {
      exit: EXIT.usage,
      path: '--spec',
      cause: error,
    });
  }
  const raw = parseJson(text, file);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  const resolved: Record<string, unknown> = { ...raw };
  for (const field of ['workspaceSeed', 'world']) {
    const dir = resolved[field];
    if (typeof dir === 'string' && dir !== '' && !isAbsolute(dir))
      resolved[field] = resolve(dirname(resolve(file)), dir);
  }
  return resolved;
}
