import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { FromHost, type HostConfig, type ToHost } from './cluster-protocol.js';

const HOST_SCRIPT = fileURLToPath(new URL('./cluster-host.js', import.meta.url));

type Answer = Exclude<FromHost, { type: 'failed' | 'serving' }>;
type Ending = 'running' | 'stopping' | 'killed';
type AnswerOf<T extends Answer['type']> = Extract<Answer, { type: T }>;

/**
 * One Host of the cluster scenario, seen from the scenario: a forked cluster-host.js and the
 * answers it sends. A request waits for the next answer of its type; a Host that reports a
 * failure or exits unasked fails every request waiting on it, so the scenario never hangs on a
 * dead Host (except the one it killed on purpose).
 */
export class HostProcess {
  private readonly waiting: Array<{ type: Answer['type']; resolve: (a: Answer) => void; reject: (e: Error) => void }> =
    [];
  private readonly servingListeners: Array<(taskIds: string[], at: number) => void> = [];
  private failure: Error | undefined;
  private rejectFailed: (e: Error) => void = () => undefined;
  /** Rejects when the Host fails or exits unasked (for waits that are not requests). */
  readonly failed = new Promise<never>((_, reject) => (this.rejectFailed = reject));
  private readonly exited: Promise<void>;
  private ending: Ending = 'running';

  private constructor(
    private readonly child: ChildProcess,
    readonly label: string,
  ) {
    this.failed.catch(() => undefined);
    this.exited = once(child, 'exit').then(([code, signal]) => {
      if (this.ending === 'killed' || (this.ending === 'stopping' && code === 0)) return;
      this.fail(
        new Error(`${label} exited (${signal ?? code}) ${this.ending === 'stopping' ? 'while stopping' : 'unasked'}`),
      );
    });
    child.on('message', (raw) => {
      const parsed = FromHost.safeParse(raw);
      if (!parsed.success) return this.fail(new Error(`${label}: unreadable message: ${parsed.error.message}`));
      const message = parsed.data;
      if (message.type === 'failed') return this.fail(new Error(`${label} failed: ${message.message}`));
      if (message.type === 'serving') {
        for (const listener of this.servingListeners) listener(message.taskIds, message.at);
        return;
      }
      const index = this.waiting.findIndex((w) => w.type === message.type);
      if (index < 0) return this.fail(new Error(`${label}: unexpected ${message.type}`));
      this.waiting.splice(index, 1)[0]!.resolve(message);
    });
  }

  /** Forks a Host and resolves once it serves (`ready`: its hostId on a cluster). */
  static async start(config: HostConfig, label: string): Promise<{ host: HostProcess; hostId: string | null }> {
    const child = fork(HOST_SCRIPT, [JSON.stringify(config)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const host = new HostProcess(child, label);
    try {
      const ready = await host.answer('ready');
      return { host, hostId: ready.hostId };
    } catch (error) {
      await host.kill();
      throw error;
    }
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Sends `message` and resolves with the Host's answer of type `type`. */
  request<T extends Answer['type']>(message: ToHost, type: T): Promise<AnswerOf<T>> {
    const answered = this.answer(type);
    this.child.send(message);
    return answered;
  }

  /** Called with each batch of Tasks the Host starts serving, after a `watch` request. */
  onServing(listener: (taskIds: string[], at: number) => void): void {
    this.servingListeners.push(listener);
  }

  /** A clean stop: leases released, the process gone; throws if it failed or exited otherwise. */
  async stop(): Promise<void> {
    if (this.ending !== 'running') return this.exited;
    this.ending = 'stopping';
    this.child.send({ type: 'stop' } satisfies ToHost);
    await this.exited;
    if (this.failure) throw this.failure;
  }

  /** SIGKILL, as a crash: nothing released; resolves once the process is gone. */
  async kill(): Promise<void> {
    this.ending = 'killed';
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }

  private answer<T extends Answer['type']>(type: T): Promise<AnswerOf<T>> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) =>
      this.waiting.push({ type, resolve: (a) => resolve(a as AnswerOf<T>), reject }),
    );
  }

  private fail(error: Error): void {
    this.failure ??= error;
    this.rejectFailed(this.failure);
    for (const w of this.waiting.splice(0)) w.reject(error);
  }
}
