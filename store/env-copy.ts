import { chmodSync, mkdirSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { open } from 'lmdb';
import { enterEnvGate } from './env-gate.js';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './private-root.js';

/**
 * Copies one LMDB environment as of one read transaction (mdb_env_copy), opened read-only:
 * consistent also while a supervisor writes to it (`ordivon backup`, `ordivon bench --state`).
 * lmdb-js keeps a path with an extension (`runtime.lmdb`) as one file, any other as a directory.
 * The copy is a state root's file: mode 0600 in a directory made 0700 (mdb_env_copy creates it 0666
 * less the umask).
 */
export async function copyEnvironment(from: string, to: string): Promise<void> {
  // Opens and closes of one LMDB environment must not overlap across processes (env-gate.ts).
  let leave = enterEnvGate(from);
  let env: ReturnType<typeof open>;
  try {
    env = open({ path: from, readOnly: true, maxDbs: 16 });
  } finally {
    leave();
  }
  try {
    mkdirSync(extname(from) ? dirname(to) : to, { recursive: true, mode: PRIVATE_DIR_MODE });
    await env.backup(to, false);
    chmodSync(extname(from) ? to : join(to, 'data.mdb'), PRIVATE_FILE_MODE);
  } finally {
    leave = enterEnvGate(from);
    try {
      await env.close();
    } finally {
      leave();
    }
  }
}
