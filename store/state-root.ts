import {
  accessSync,
  chmodSync,
  closeSync,
  constants,
  existsSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  writeFileSync,
  fsyncSync,
  statSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { StoreError } from './errors.js';
import {
  ALLOW_SHARED_ROOT_ENV,
  PRIVATE_DIR_MODE,
  PRIVATE_FILE_MODE,
  SHARED_MODE_BITS,
  makePrivateDir,
  octalMode,
  sharedRootAllowedByEnv,
} from './private-root.js';
import { FORMAT_NAME, FORMAT_VERSION, FormatFile } from './records.js';

/** How a state root is opened. */
export interface StateRootOptions {
  /**
   * Open a root whose mode lets other local accounts in (any of 0o077), as it is, changing no
   * mode in it; default `ORDIVON_ALLOW_SHARED_ROOT=1`, else refused `state_root_shared`.
   */
  allowShared?: boolean | undefined;
}

/** Resolves the state root: explicit option, then ORDIVON_STATE, then ./.ordivon. */
export function resolveStateRoot(explicit?: string): string {
  return resolve(explicit ?? process.env.ORDIVON_STATE ?? '.ordivon');
}

/**
 * What is at `root`, refused before anything reads or writes there: `state_not_directory` (a file,
 * or a path through one), `state_unreadable` (a directory this process may not list or enter),
 * `state_root_shared` (a root other local accounts may enter: `sharedRootRefusal`). Returns
 * whether the root exists.
 */
export function checkStateRoot(root: string, options: StateRootOptions = {}): boolean {
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
  const refusal = sharedRootRefusal(root, options);
  if (refusal) throw refusal;
  return true;
}

/**
 * The names a Host makes in a state root. A directory holding only these (or nothing) and no
 * `format.json` yet is a root being created (openHost's Runtime makes `runtime/` before the store
 * writes `format.json`), which the store then makes 0700; any other directory other accounts
 * may enter is not the Host's to change.
 */
const HOST_NAMES = /^(runtime|workspaces|lmdb|lmdb\.gate.*|journal|state\.lock|format\.json\..*\.tmp)$/;

/**
 * `state_root_shared` for a root whose mode lets other local accounts in (group or other bits),
 * unless allowed (`allowShared`, else `ORDIVON_ALLOW_SHARED_ROOT=1`): a root holding `format.json`,
 * or a directory that holds anything a Host does not make. Undefined when the root may be opened.
 */
function sharedRootRefusal(root: string, options: StateRootOptions): StoreError | undefined {
  const mode = statSync(root).mode;
  if ((mode & SHARED_MODE_BITS) === 0 || (options.allowShared ?? sharedRootAllowedByEnv())) return undefined;
  const existing = existsSync(join(root, 'format.json'));
  if (!existing && readdirSync(root).every((name) => HOST_NAMES.test(name))) return undefined;
  const what = existing
    ? 'other local accounts can enter it and read every Task it holds (specs, evidence, Contexts, agent output) and service.json'
    : 'it holds files an Ordivon state root does not, and other local accounts can enter it';
  return new StoreError(
    'state_root_shared',
    `the state root ${root} has mode ${octalMode(mode)}: ${what}; run chmod 700 ${root} (or open it as it is with --allow-shared-root, ${ALLOW_SHARED_ROOT_ENV}=1)`,
    { root, mode: octalMode(mode) },
  );
}

function notDirectory(root: string, what: string): StoreError {
  return new StoreError('state_not_directory', `the state root ${root} is ${what}`, { root });
}

function unreadable(root: string, error: Error): StoreError {
  return new StoreError('state_unreadable', `the state root ${root} cannot be read: ${error.message}`, { root });
}

/**
 * Checks `format.json`, creating it for a new root when `create` is set: the root mode 0700 (an
 * existing directory made so, unless `allowShared`), `format.json` 0600. A root of another
 * format or version is refused `format_unknown`; a missing root `state_missing`; a file, a
 * directory that cannot be read, or one other local accounts may enter,
 * `state_not_directory` / `state_unreadable` / `state_root_shared` (`checkStateRoot`).
 */
export function checkFormat(root: string, create: boolean, options: StateRootOptions = {}): void {
  const path = join(root, 'format.json');
  const rootExists = checkStateRoot(root, options);
  if (!rootExists || !existsSync(path)) {
    if (!create) throw new StoreError('state_missing', `no Ordivon state at ${root}`, { root });
    try {
      makePrivateDir(root);
      if (!(options.allowShared ?? sharedRootAllowedByEnv())) chmodSync(root, PRIVATE_DIR_MODE);
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
  writeFileSync(tmp, text, { mode: PRIVATE_FILE_MODE });
  chmodSync(tmp, PRIVATE_FILE_MODE);
  const fd = openSync(tmp, 'r');
  fsyncSync(fd);
  closeSync(fd);
  renameSync(tmp, path);
}
