import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { CliError, EXIT } from '../cli-io.js';

/** Where `serve`'s bearer token came from; `flag` is the one every local account can read in `ps`. */
export type TokenSource = 'token-file' | 'flag' | 'env' | 'none';

/** What `ps` shows every local account: said on stderr when `--token` is given. */
export const TOKEN_FLAG_WARNING =
  '--token is visible to every local account in ps (/proc/<pid>/cmdline): give the token with --token-file PATH (mode 0600) or ORDIVON_TOKEN instead';

/**
 * `serve`'s bearer token: `--token-file PATH` (the file's contents, trimmed), else `--token T`,
 * else `ORDIVON_TOKEN` (empty: none), else none (`startService` then generates one for TCP).
 * Read before anything is opened. Refuses, exit 2: both flags (`usage`); a token file whose mode
 * lets other accounts read or write it (`token_file_shared`: any of 0o077, as `ssh` refuses a
 * private key); one that cannot be read or holds no token, or more than one word
 * (`token_file_invalid`).
 */
export function serveToken(
  flags: { token?: string | undefined; 'token-file'?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): { token: string | undefined; source: TokenSource } {
  if (flags.token !== undefined && flags['token-file'] !== undefined)
    throw new CliError('usage', 'give --token-file or --token, not both', { exit: EXIT.usage, path: '--token-file' });
  if (flags['token-file'] !== undefined) return { token: readTokenFile(flags['token-file']), source: 'token-file' };
  if (flags.token !== undefined) return { token: flags.token, source: 'flag' };
  const fromEnv = env.ORDIVON_TOKEN;
  return fromEnv ? { token: fromEnv, source: 'env' } : { token: undefined, source: 'none' };
}

function readTokenFile(path: string): string {
  const invalid = (why: string, cause?: unknown) =>
    new CliError('token_file_invalid', `--token-file ${path}: ${why}`, {
      exit: EXIT.usage,
      path: '--token-file',
      cause,
    });
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw invalid(`cannot be read: ${(error as Error).message}`, error);
  }
  let text: string;
  try {
    // The mode of the file read, not of the path checked before: nothing can swap it in between.
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw invalid('is not a regular file');
    const mode = stat.mode & 0o777;
    if ((mode & 0o077) !== 0)
      throw new CliError(
        'token_file_shared',
        `--token-file ${path} has mode 0${mode.toString(8).padStart(3, '0')}: other local accounts can read or change the token; run chmod 600 ${path}`,
        { exit: EXIT.usage, path: '--token-file' },
      );
    text = readFileSync(fd, 'utf8');
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw invalid(`cannot be read: ${(error as Error).message}`, error);
  } finally {
    closeSync(fd);
  }
  const token = text.trim();
  if (token === '') throw invalid('holds no token (it is empty)');
  if (/\s/.test(token)) throw invalid('holds more than one word: the token is its whole contents, trimmed');
  return token;
}
