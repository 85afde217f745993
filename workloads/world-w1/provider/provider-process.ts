import { fileURLToPath } from 'node:url';
import type { ServerExit } from '../../shared/server-child.js';
import { ServerHandle, type ServerProcess } from '../../shared/server-process.js';
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

/** A provider server process and its records, which outlive every process started on them. */
export interface ProviderProcess extends ServerProcess {
  /** The fingerprint the server answers under when no fault changes it (`sha256:…` of the key). */
  readonly identity: string;
  readonly dir: string;
  /** SIGKILL: the process ends without closing anything (the WAL keeps every commit). */
  kill(): Promise<ProviderExit>;
  /**
   * "Provider restart": stops the current process (if it still runs) and starts a new one on the
   * same records and port; fault switches start off (they are the process's, never stored), the
   * clock keeps every advance (it is stored). Rejects `provider_start_failed` if it cannot start.
   */
  restart(options?: Partial<Omit<StartProviderOptions, 'dir'>>): Promise<void>;
}

type Next = Partial<Omit<StartProviderOptions, 'dir'>>;

class ProviderHandle extends ServerHandle<UrlLine, Next> implements ProviderProcess {
  private constructor(private current: StartProviderOptions) {
    super({
      script: SERVER,
      line: UrlLine,
      startFailed: (why) => new ProviderError('provider_start_failed', `provider server on ${current.dir}: ${why}`),
    });
  }

  get dir(): string {
    return this.current.dir;
  }

  get identity(): string {
    return this.line.identity;
  }

  override get url(): string {
    return this.line.url;
  }

  /** A restart keeps every option it is not given. */
  protected flags(port: number, next: Next = {}) {
    const { dir, identity, retentionMs, settleMs } = (this.current = { ...this.current, ...next });
    return { dir, identity, port, 'retention-ms': retentionMs, 'settle-ms': settleMs };
  }

  protected portOf(line: UrlLine): number {
    return Number(new URL(line.url).port);
  }

  static start(options: StartProviderOptions): Promise<ProviderHandle> {
    return new ProviderHandle(options).begin({});
  }
}

/**
 * Starts `server.js` as a child process on `options.dir` (a free port on 127.0.0.1) and resolves
 * once it printed its URL line. Rejects `provider_start_failed` (with the server's stderr) if it
 * exits first or prints something else. The child is killed if this process exits.
 */
export function startProvider(options: StartProviderOptions): Promise<ProviderProcess> {
  return ProviderHandle.start(options);
}
