import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeFileSync,
  fsyncSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { StoreError } from './errors.js';
import { FORMAT_NAME, FORMAT_VERSION, FormatFile } from './records.js';

/** Resolves the state root: explicit option, then ORDIVON_STATE, then ./.ordivon. */
export function resolveStateRoot(explicit?: string): string {
  return resolve(explicit ?? process.env.ORDIVON_STATE ?? '.ordivon');
}

/**
 * Checks `format.json`, creating it for a new root when `create` is set. A root of another
 * format or version is refused `format_unknown`; a missing root `state_missing`.
 */
export function checkFormat(root: string, create: boolean): void {
  const path = join(root, 'format.json');
  if (!existsSync(path)) {
    if (!create) throw new StoreError('state_missing', `no Ordivon state at ${root}`, { root });
    mkdirSync(root, { recursive: true });
    writeDurably(path, JSON.stringify({ format: FORMAT_NAME, version: FORMAT_VERSION }, null, 2) + '\n');
    return;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new StoreError('format_unknown', `${path} is not JSON: ${(error as Error).message}`, { root, object: path });
  }
  const format = FormatFile.safeParse(parsed);
  if (!format.success || format.data.version !== FORMAT_VERSION) {
    throw new StoreError(
      'format_unknown',
      `${path} names ${JSON.stringify(parsed)}; this build reads ${FORMAT_NAME} v${FORMAT_VERSION}`,
      {
        root,
        object: path,
      },
    );
  }
}

function writeDurably(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  const fd = openSync(tmp, 'r');
  fsyncSync(fd);
  closeSync(fd);
  renameSync(tmp, path);
}
