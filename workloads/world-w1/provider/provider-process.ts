import { fileURLToPath } from 'node:url';
import { spawnServerChild, type ServerExit } from '../../shared/server-child.js';
import { ProviderError } from './provider-error.js';
import { UrlLine } from './provider-schema.js';

const SERVER = fileURLToPath(new URL('./server.js', import.meta.url));

/** How to start a provider server (each one a flag of `server.js`, docs/world-w1.md). */
export interface StartProviderOptions {
  /** The directory of its records file (`provider.db`, created if absent; reopened as it is if present). */
  dir: string;
  /** The key whose fingerprint the provider answers under (`Provider-Identity`). */
  identity: string;
  /** How long an idempotency key is kept (default one day). */
  retentionMs?: number;
  /** How long on the provider's clock a transfer stays `pending` (default 0). */
  settleMs?: number;
}

/** How a server process ended. */
export type ProviderExit = ServerExit;

interface Running {
  url: string;
  identity: string;
  pid: number;
  exited: Promise<ProviderExit>;
  kill: (signal: 'SIGTERM' | 'SIGKILL') => void;
}

/** A provider server process and its records, which outlive every process started on them. */
export interface ProviderProcess {
  /** `http://127.0.0.1:PORT`; the same after `restart()`, which listens on the same port again. */
  readonly url: string;
  /** The fingerprint the server answers under when no fault changes it (`sha256:…` of the key). */
  readonly identity: string;
  readonly pid: number;
  readonly dir: string;
  /** Settles when the current process ends, for whatever reason (never rejects). */
  readonly exited: Promise<ProviderExit>;
  /** SIGTERM (the server closes its records and exits 0), then waits for the exit. */
  stop(): Promise<ProviderExit>;
  /** SIGKILL: the process ends without closing anything (the WAL keeps every commit). */
  kill(): Promise<ProviderExit>;
  /**
   * "Provider restart": stops the current process (if it still runs) and starts a new one on the
   * same records and port; fault switches start off (they are the process's, never stored), the
   * clock keeps every advance (it is stored). Rejects `provider_start_failed` if it cannot start.
   */
  restart(options?: Partial<Omit<StartProviderOptions, 'dir'>>): Promise<void>;
}

/**
 * Starts `server.js` as a child process on `options.dir` (a free port on 127.0.0.1) and resolves
 * once it printed its URL line. Rejects `provider_start_failed` (with the server's stderr) if it
 * exits first or prints something else. The child is killed if this process exits.
 */
export async function startProvider(options: StartProviderOptions): Promise<ProviderProcess> {
  let current = options;
  let running = await spawnServer(current, 0);
  return {
    get url() {
      return running.url;
    },
    get identity() {
      return running.identity;
    },
    get pid() {
      return running.pid;
    },
    get exited() {
      return running.exited;
    },
    dir: options.dir,
    async stop() {
      running.kill('SIGTERM');
      return running.exited;
    },
    async kill() {
      running.kill('SIGKILL');
      return running.exited;
    },
    async restart(next = {}) {
      running.kill('SIGTERM');
      await running.exited;
      current = { ...current, ...next };
      running = await spawnServer(current, Number(new URL(running.url).port));
    },
  };
}

async function spawnServer(options: StartProviderOptions, port: number): Promise<Running> {
  const args = [SERVER, '--dir', options.dir, '--identity', options.identity, '--port', String(port)];
  if (options.retentionMs !== undefined) args.push('--retention-ms', String(options.retentionMs));
  if (options.settleMs !== undefined) args.push('--settle-ms', String(options.settleMs));
  const child = await spawnServerChild(
    args,
    UrlLine,
    (why) => new ProviderError('provider_start_failed', `provider server on ${options.dir}: ${why}`),
  );
  return { ...child.line, pid: child.pid, exited: child.exited, kill: (signal) => child.kill(signal) };
}
