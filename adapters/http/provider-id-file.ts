import { closeSync, existsSync, fsyncSync, openSync, readFileSync, truncateSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { describeIssues } from '../../base/index.js';
import { HttpEffectError } from './http-effect-error.js';

/** One line of the file: the provider id a `perform` under `requestId` was given. */
const IdLine = z.strictObject({ requestId: z.string().min(1), operation: z.string().min(1), id: z.string().min(1) });
type IdLine = z.infer<typeof IdLine>;

/**
 * Appends `line` and syncs it (and, when the file is new, its directory) before returning: once
 * this returns, a process killed next still finds the id on restart. A torn last line left by an
 * earlier crash (its sync never returned, so no perform polled on it) is cut off first.
 */
export function recordProviderId(file: string, line: IdLine): void {
  const created = !existsSync(file);
  const text = readTail(file);
  if (text !== '' && !text.endsWith('\n'))
    truncateSync(file, Buffer.byteLength(text.slice(0, text.lastIndexOf('\n') + 1)));
  const fd = openSync(file, 'a');
  try {
    writeSync(fd, JSON.stringify(line) + '\n');
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  if (created) {
    const dir = openSync(dirname(file), 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
  }
}

function readTail(file: string): string {
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
}

/**
 * The provider ids recorded under `requestId` for `operation`, in the order written. A last line
 * without its newline was torn by a crash before its sync returned: its `perform` had not polled
 * yet, so it is left out. Any other line that does not parse throws `http_effect_id_file_invalid`.
 */
export function providerIdsOf(file: string, requestId: string, operation: string): string[] {
  const text = readTail(file);
  const lines = text.split('\n');
  lines.pop(); // '' after the last newline, or the torn line
  return lines.flatMap((raw, index) => {
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      json = undefined;
    }
    const parsed = IdLine.safeParse(json);
    if (!parsed.success)
      throw new HttpEffectError(
        'http_effect_id_file_invalid',
        `${file}:${index + 1}: ${json === undefined ? 'not JSON' : describeIssues(parsed.error)}`,
      );
    return parsed.data.requestId === requestId && parsed.data.operation === operation ? [parsed.data.id] : [];
  });
}
