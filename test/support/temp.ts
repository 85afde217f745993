import { mkdtempSync, rmSync } from 'node:fs';
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
