import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * The hash of the Task statechart's code that a checkpoint is bound to (docs/design.md, "The
 * machine-code hash"): sha256 over the module files that decide how a replayed event is taken —
 * `machines/task-machine.js` (config, guards, actions), `machines/task-frontier.js` (the
 * disposition a replay compares), and every module they import relatively, transitively — each as
 * its path relative to the build's root (`machines/task-machine.js`), a NUL, its bytes, a NUL, in path order; then xstate's version.
 *
 * Why files and not the machine's config serialised with its functions' source text: a guard or
 * action calls helpers of other modules (`rejection-detail`, `task-context`) whose code a
 * `Function.prototype.toString` of the guard does not contain, and the config holds closures whose
 * text alone says nothing of what they close over. The compiled files are what runs: they are the
 * same bytes in every process and every install of one build (tsc emits them deterministically),
 * and any change of behaviour code changes them. A change that does not change behaviour (a
 * comment) changes the hash too, which costs one full replay, never a wrong trust.
 */
export function machineCodeHash(): string {
  return (cached ??= hashModules(ENTRIES));
}

let cached: string | undefined;

const MACHINES = new URL('../machines/', import.meta.url);
const ENTRIES = ['task-machine.js', 'task-frontier.js'];
const RELATIVE_IMPORT =
  /(?:^|[\s;])(?:import|export)\b[^'"]*?\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]|import\s*['"](\.{1,2}\/[^'"]+)['"]/g;

/** The hash of these modules of `machines/` and what they import relatively, plus xstate's version. */
export function hashModules(entries: readonly string[], base: URL = MACHINES): string {
  const seen = new Map<string, Buffer>();
  const pending = entries.map((entry) => new URL(entry, base));
  while (pending.length > 0) {
    const url = pending.pop()!;
    const path = fileURLToPath(url);
    if (seen.has(path)) continue;
    const bytes = readFileSync(path);
    seen.set(path, bytes);
    for (const match of bytes.toString('utf8').matchAll(RELATIVE_IMPORT))
      pending.push(new URL((match[1] ?? match[2])!, url));
  }
  // Names relative to the build's root (the parent of machines/), so the hash is the same wherever it is installed.
  const root = fileURLToPath(new URL('../', base));
  const hash = createHash('sha256');
  for (const path of [...seen.keys()].sort()) {
    const name = path.startsWith(root) ? path.slice(root.length) : path;
    hash.update(name).update('\u0000').update(seen.get(path)!).update('\u0000');
  }
  hash.update(`xstate@${xstateVersion()}`);
  return `sha256:${hash.digest('hex')}`;
}

function xstateVersion(): string {
  const require = createRequire(import.meta.url);
  return (require('xstate/package.json') as { version: string }).version;
}
