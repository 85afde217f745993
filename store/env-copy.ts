import { mkdirSync } from 'node:fs';
import { dirname, extname } from 'node:path';
import { open } from 'lmdb';
import { enterEnvGate } from './env-gate.js';

/**
 * Copies one LMDB environment as of one read transaction (mdb_env_copy), opened read-only:
 * consistent also while a supervisor writes to it (`ordivon backup`, `ordivon bench --state`).
 * lmdb-js keeps a path with an extension (`runtime.lmdb`) as one file, any other as a directory.
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
    mkdirSync(extname(from) ? dirname(to) : to, { recursive: true });
    await env.backup(to, false);
  } finally {
    leave = enterEnvGate(from);
    try {
      await env.close();
    } finally {
      leave();
    }
  }
}
