import { chmodSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { lockHolder } from '../../store/index.js';

/** `<state>/service.json`: how to reach the service that holds the state root (mode 0600). */
export const ServiceFile = z.object({
  pid: z.number().int(),
  startedAt: z.string(),
  /** `http://127.0.0.1:PORT` for TCP, `http://localhost` for a unix socket. */
  url: z.string(),
  socket: z.string().optional(),
  tokenRequired: z.boolean(),
  /**
   * The bearer token the service requires (given with `--token`, else generated at start). It is
   * written here and nowhere else: whoever cannot read this 0600 file cannot talk to the service.
   */
  token: z.string().min(1).optional(),
});
export type ServiceFile = z.infer<typeof ServiceFile>;

export const SERVICE_FILE = 'service.json';

/** Writes the service file atomically; returns the function that removes it (if it is still ours). */
export function writeServiceFile(root: string, info: ServiceFile): () => void {
  const path = join(root, SERVICE_FILE);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(info, null, 2) + '\n', { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
  return () => {
    if (readServiceFile(root)?.pid === info.pid) rmSync(path, { force: true });
  };
}

function readServiceFile(root: string): ServiceFile | null {
  try {
    const parsed = ServiceFile.safeParse(JSON.parse(readFileSync(join(root, SERVICE_FILE), 'utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * The service holding `root`, or null: its `service.json` must name the live process that holds
 * `state.lock`. A file left by a crashed service (its pid no longer holds the lock) is ignored.
 */
export function runningService(root: string): ServiceFile | null {
  const info = readServiceFile(root);
  if (!info) return null;
  const holder = lockHolder(root);
  return holder && holder.pid === info.pid ? info : null;
}
