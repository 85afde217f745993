import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeFileSync,
  fsyncSync,
  statSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { StoreError } from './errors.js';
import { FORMAT_NAME, FORMAT_VERSION, FormatFile } from './records.js';

/** Resolves the state root: explicit option, then ORDIVON_STATE, then ./.ordivon. */
export function resolveStateRoot(explicit?: string): string {
  return resolve(explicit ?? process.env.ORDIVON_STATE ?? '.ordivon');
}

/**
 * What is at `root`, refused before anything reads or writes there: `state_not_directory` (a file,
 * or a path through one), `state_unreadable` (a directory this process may not list or enter).
 * Returns whether the root exists.
 */
export function checkStateRoot(root: string): boolean {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(root).isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return false;
    if (code === 'ENOTDIR') throw notDirectory(root, 'a path through a file');
    if (code === 'EACCES' || code === 'EPERM') throw unreadable(root, error as Error);
    throw error;
  }
  if (!isDirectory) throw notDirectory(root, 'not a directory');
  try {
    accessSync(root, constants.R_OK | constants.X_OK);
  } catch (error) {
    throw unreadable(root, error as Error);
  }
  return true;
}

function notDirectory(root: string, what: string): StoreError {
  return new StoreError('state_not_directory', `the state root ${root} is ${what}`, { root });
}

function unreadable(root: string, error: Error): StoreError {
  return new StoreError('state_unreadable', `the state root ${root} cannot be read: ${error.message}`, { root });
}

/**
 * Checks `format.json`, creating it for a new root when `create` is set. A root of another
 * format or version is refused `format_unknown`; a missing root `state_missing`; a file, or a
 * directory that cannot be read, `state_not_directory` / `state_unreadable` (`checkStateRoot`).
 */
export function checkFormat(root: string, create: boolean): void {
  const path = join(root, 'format.json');
  const rootExists = checkStateRoot(root);
  if (!rootExists || !existsSync(path)) {
    if (!create) throw new StoreError('state_missing', `no Ordivon state at ${root}`, { root });
    try {
      mkdirSync(root, { recursive: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOTDIR' || code === 'EEXIST') throw notDirectory(root, 'a path through a file');
      if (code === 'EACCES' || code === 'EPERM') throw unreadable(root, error as Error);
      throw error;
    }
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
