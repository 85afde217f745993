import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

/**
 * Where an unconfined `codex app-server`'s home goes in tests: not under /tmp. Codex's own Linux
 * sandbox (the system's bubblewrap, where installed) mounts an empty /tmp over every tool command,
 * which hides the helper links Codex keeps under `CODEX_HOME/tmp` and fails each command with
 * `execvp codex-linux-sandbox: No such file or directory`.
 */
export function codexHomeDir(): string {
  return join(tempDir('ordivon-codex-home-', '/var/tmp'), 'home');
}
process.on('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/**
 * A fresh temp directory (under `base`, default the system's temp folder), removed when the test
 * process exits (also when made inside a hook).
 */
export function tempDir(prefix = 'ordivon-test-', base = tmpdir()): string {
  const dir = mkdtempSync(join(base, prefix));
  made.push(dir);
  return dir;
}

/**
 * SIGKILLs every process whose working directory is under `dir`: what a test started there and
 * may have left running. By host pid, read from /proc: a confined process's own pid (what it
 * would write to a file) is its pid namespace's and names another process out here.
 */
export function killProcessesUnder(dir: string): void {
  for (const name of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(name)) continue;
    let cwd: string;
    try {
      cwd = readlinkSync(`/proc/${name}/cwd`);
    } catch {
      continue;
    }
    if (cwd === dir || cwd.startsWith(dir + '/'))
      try {
        process.kill(Number(name), 'SIGKILL');
      } catch {
        /* gone meanwhile */
      }
  }
}
