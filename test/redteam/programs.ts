import { chmodSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../support/temp.js';

/** The folder holding the attack program and the model relay, as a confined agent is given it (`readable`). */
export interface Programs {
  dir: string;
  /** `node <attack> <attack name> <args…>` (attack.ts). */
  attack: string;
  /** `node <relay> <unix socket> <port> <command> <args…>` (relay.ts). */
  relay: string;
}

/**
 * Copies the compiled attack program and relay into a temp folder of their own, outside the state
 * root and the repository. The Host runs as root here and the sandbox as `nobody`, so the folder
 * and the files are made readable by every account (bwrap mounts them read-only either way).
 */
export function writePrograms(): Programs {
  const dir = tempDir('ordivon-redteam-programs-');
  chmodSync(dir, 0o755);
  const copy = (compiled: string, name: string): string => {
    const to = join(dir, name);
    copyFileSync(fileURLToPath(new URL(compiled, import.meta.url)), to);
    chmodSync(to, 0o644);
    return to;
  };
  return { dir, attack: copy('./attack.js', 'attack.mjs'), relay: copy('./relay.js', 'relay.mjs') };
}

/** One word of a POSIX shell command line. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
