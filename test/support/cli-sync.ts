import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The built CLI entry (`dist/cli/ordivon.js`). */
export const ORDIVON_CLI = fileURLToPath(new URL('../../cli/ordivon.js', import.meta.url));

/**
 * `ordivon ARGS` run to its end in a child process, as another user when `uid` is given (a
 * directory mode means nothing to root): its exit code and streams, stdout as JSON, and the
 * `--json` error object, which is printed on stderr (stdout then stays empty).
 */
export function ordivonSync(args: readonly string[], options: { uid?: number } = {}) {
  const r = spawnSync(process.execPath, [ORDIVON_CLI, ...args], {
    encoding: 'utf8',
    ...(options.uid !== undefined ? { uid: options.uid, gid: options.uid } : {}),
  });
  return {
    status: r.status,
    stdout: r.stdout,
    stderr: r.stderr,
    json: () => JSON.parse(r.stdout),
    error: () => JSON.parse(r.stderr).error,
  };
}
