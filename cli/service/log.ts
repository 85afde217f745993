import { pino, type Logger } from 'pino';
import { z } from 'zod';
import type { Supervisor, Committed, LeaseEvent } from '../../kernel/index.js';
import type { ServiceMetrics } from './metrics.js';

/** The levels `--log-level` and `ORDIVON_LOG_LEVEL` take (pino's). */
export const LogLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
  error: 'must be fatal, error, warn, info, debug, trace or silent',
});
export type LogLevel = z.infer<typeof LogLevel>;

/**
 * The service's log: one JSON object per line on stderr (pino), written synchronously so the
 * lines before an exit are not lost in a buffer.
 */
export function createServiceLog(level: LogLevel): Logger {
  return pino({ level, base: { pid: process.pid } }, pino.destination({ dest: 2, sync: true }));
}

/**
 * What the supervisor reports, logged and counted: every commit this Host writes (a `transition`
 * line: admitted, or refused and retained with its code), each dispatch and job end among them.
 * Commits another Host made are that Host's to log. Returns the unsubscribe.
 */
export function observeSupervisor(sup: Supervisor, log: Logger, metrics: ServiceMetrics): () => void {
  metrics.attach(sup);
  // Another Host's commits are that Host's to log: not asked for, so not read or replayed for this.
  return sup.subscribe(
    (c: Committed) => {
      if (c.host !== undefined && c.host !== sup.hostId) return;
      const status = c.type === 'run.observe' && c.admitted ? jobStatusOf(sup, c) : undefined;
      metrics.committed(c, status);
      const line = { taskId: c.taskId, event: c.type, revision: c.revision, state: c.state, admitted: c.admitted };
      if (c.admitted) log.info(line, 'transition admitted');
      else log.warn({ ...line, code: c.code }, 'transition refused');
      if (!c.admitted) return;
      if (c.type === 'dispatch.intend') log.info({ taskId: c.taskId, revision: c.revision }, 'dispatch');
      if (c.type === 'run.observe') log.info({ taskId: c.taskId, revision: c.revision, jobStatus: status }, 'job end');
    },
    { remote: 'none' },
  );
}

/** The job status the `run.observe` event at `c.revision` recorded. */
function jobStatusOf(sup: Supervisor, c: Committed): string | undefined {
  const event = sup.events(c.taskId).find((e) => e.revision === c.revision);
  const status = (event?.data as { jobStatus?: unknown } | undefined)?.jobStatus;
  return typeof status === 'string' ? status : undefined;
}

/** One lease change, logged (a loss as a warning) and counted. */
export function logLease(log: Logger, metrics: ServiceMetrics, event: LeaseEvent): void {
  metrics.lease(event);
  if (event.kind === 'acquired')
    log.info({ taskId: event.taskId, epoch: event.epoch, takeover: event.epoch > 1 }, 'lease acquired');
  else log.warn({ taskId: event.taskId }, 'lease lost');
}
