import { hostOptionsOf } from '../../frontier/index.js';
import { openHost } from '../../host/index.js';
import { redact } from '../../store/postgres/index.js';
import { HostError } from '../../kernel/index.js';
import {
  createSupervisor,
  type BootSummary,
  type LeaseEvent,
  type Supervisor,
  type SupervisorOptions,
} from '../../kernel/index.js';
import type { Logger } from 'pino';
import { startService, type RunningService } from '../service/start-service.js';
import { ApiError } from '../service/http-io.js';
import { startInspector, type InspectorHandle } from '../service/inspector.js';
import { CliError, EXIT, cliErrorOf, count, throttledProgress, type Io } from '../cli-io.js';
import { DEFAULT_DRAIN_TIMEOUT_MS, type ServeArgs } from './serve-flags.js';
import { planServe, type Harnesses, type ServePlan } from './serve-plan.js';
import type { ServiceMetrics } from '../service/metrics.js';
import { TOKEN_FLAG_WARNING, type TokenSource } from './serve-token.js';
import { packageVersion } from '../version.js';
import { effectAdaptersOf } from '../effect-adapters.js';
import { resolveStateRoot } from '../../store/index.js';
import { demoHarnesses } from '../extensions.js';
import { onStopSignal } from '../stop-signals.js';

/** `ordivon serve` (serve-command.ts defines its flags): runs until SIGTERM/SIGINT has drained it. */
export async function serveHost(values: ServeArgs, io: Io): Promise<number> {
  const plan = await planServe(values);
  const say = (text: string) => {
    if (!io.json) io.err(text);
  };
  const logged = await serviceLog(values, io, plan.tokenSource);
  const { log } = logged;
  const inspector = values.inspect ? await startInspector(values['inspect-url']) : undefined;
  const base = supervisorOptions(values, plan, io, say, logged, inspector);
  const opened = await openOrExplain(plan.harnesses, base, say, log, inspector);
  const { supervisor, stop: stopHost } = opened;
  const unobserve = logged.observe(supervisor);
  log.info({ boot: supervisor.bootReport(), hostId: supervisor.hostId ?? null }, 'boot');
  const service = await listen(opened, plan, logged, inspector);
  // Published once listening (a port of 0 is known only now); a database that does not answer
  // gets it with the next lease renewal.
  const advertisedUrl = values['advertise-url'] ?? (service.listener.kind === 'tcp' ? service.url : null);
  await supervisor.history?.advertise(advertisedUrl).catch(() => undefined);
  const ready = readyOf(values, plan, opened, service, inspector);
  // Listening before the ready line is printed: whoever reads it may send SIGTERM at once, and
  // without a listener that signal would kill the process instead of draining it.
  // Listened to until the process ends: a second signal during the drain is ignored (stop-signals.ts).
  const stopped = new Promise<string>((resolve) => onStopSignal(resolve));
  announce(ready, supervisor, io, say);
  const signal = await stopped;
  await drainAndStop({ service, supervisor, stopHost, unobserve, inspector, log }, signal, values, say);
  return EXIT.ok;
}

/** The service's JSON log and counters, and what reports into them. */
interface ServiceLog {
  log: Logger;
  metrics: ServiceMetrics;
  onLease(event: LeaseEvent): void;
  /** Logs and counts what `supervisor` commits; returns the unsubscribe. */
  observe(supervisor: Supervisor): () => void;
}

/** The log at `--log-level` (else `ORDIVON_LOG_LEVEL`, else info), with the warning a `--token` earns. */
async function serviceLog(values: ServeArgs, io: Io, tokenSource: TokenSource): Promise<ServiceLog> {
  const { LogLevel, createServiceLog, logLease, observeSupervisor } = await import('../service/log.js');
  const { ServiceMetrics } = await import('../service/metrics.js');
  const envLevel = process.env.ORDIVON_LOG_LEVEL;
  const level = values['log-level'] ?? (envLevel ? LogLevel.safeParse(envLevel).data : 'info');
  if (level === undefined)
    throw new CliError('usage', `ORDIVON_LOG_LEVEL: ${LogLevel.options.join(', ')}`, {
      exit: EXIT.usage,
      path: 'ORDIVON_LOG_LEVEL',
    });
  const log = createServiceLog(level);
  const metrics = new ServiceMetrics();
  // The command line is world-readable (/proc/<pid>/cmdline); the environment and a 0600 file are not.
  if (tokenSource === 'flag') {
    if (io.json) log.warn({ flag: '--token' }, TOKEN_FLAG_WARNING);
    else io.err(`ordivon serve: warning: ${TOKEN_FLAG_WARNING}`);
  }
  return {
    log,
    metrics,
    onLease: (event) => logLease(log, metrics, event),
    observe: (supervisor) => observeSupervisor(supervisor, log, metrics),
  };
}

/** The supervisor's options: the state root, the database and its cluster flags, the boot progress. */
function supervisorOptions(
  values: ServeArgs,
  { state, store }: ServePlan,
  io: Io,
  say: (text: string) => void,
  { onLease }: ServiceLog,
  inspector: InspectorHandle | undefined,
): SupervisorOptions {
  const { recovery, 'checkpoint-every': checkpointEvery } = values;
  return {
    state,
    purpose: `ordivon serve pid ${process.pid}`,
    recovery,
    ...(store
      ? {
          store,
          cluster: {
            ...(values['host-id'] !== undefined ? { hostId: values['host-id'] } : {}),
            ...(values['lease-ms'] !== undefined ? { leaseMs: values['lease-ms'] } : {}),
            ...(values['poll-ms'] !== undefined ? { pollMs: values['poll-ms'] } : {}),
            ...(values['no-notify'] ? { notify: false } : {}),
            onLease,
            ...(values['advertise-url'] !== undefined ? { advertisedUrl: values['advertise-url'] } : {}),
            ...(values['db-connect-timeout-ms'] !== undefined
              ? { connectTimeoutMs: values['db-connect-timeout-ms'] }
              : {}),
            ...(values['db-statement-timeout-ms'] !== undefined
              ? { statementTimeoutMs: values['db-statement-timeout-ms'] }
              : {}),
          },
        }
      : {}),
    ...(checkpointEvery !== undefined ? { checkpointEvery } : {}),
    ...(inspector ? { inspect: inspector.inspect } : {}),
    // A long history takes a while to verify: say how far it got (every 2 s; nothing with --json).
    ...(io.json ? {} : { onBootProgress: throttledProgress(say, 'ordivon serve: validating, ') }),
  };
}

/** The Host opened; a refused boot logs each finding and exits 2 for a configuration at fault, else 1. */
async function openOrExplain(
  harnesses: Harnesses,
  base: SupervisorOptions,
  say: (text: string) => void,
  log: Logger,
  inspector: InspectorHandle | undefined,
): Promise<OpenedHost> {
  try {
    return await openServeHost(harnesses, base, say, (taskId, text) => log.info({ taskId, step: text }, 'step'));
  } catch (error) {
    inspector?.stop();
    if (error instanceof HostError) for (const finding of error.findings) log.error({ ...finding }, 'boot finding');
    if (error instanceof HostError)
      throw cliErrorOf(error, {
        details: { findings: error.findings },
        exit: error.code === 'invalid_config' || error.code === 'env_missing' ? EXIT.usage : EXIT.failed,
      });
    throw error;
  }
}

/** The control API served on the listener; when it cannot listen, the Host is stopped before the error. */
async function listen(
  { supervisor, stop: stopHost }: OpenedHost,
  { listener, token }: ServePlan,
  { log, metrics }: ServiceLog,
  inspector: InspectorHandle | undefined,
): Promise<RunningService> {
  try {
    return await startService({ supervisor, listener, log, metrics, ...(token ? { token } : {}) });
  } catch (error) {
    await stopHost();
    inspector?.stop();
    if (error instanceof ApiError)
      throw cliErrorOf(error, { exit: error.code === 'token_required' ? EXIT.usage : EXIT.failed });
    throw new CliError('listen_failed', `cannot listen: ${(error as Error).message}`, { cause: error });
  }
}

/** The ready line's fields (`{ listening: … }` with --json). */
function readyOf(
  values: ServeArgs,
  { state, store, harnesses }: ServePlan,
  { supervisor, label }: OpenedHost,
  service: RunningService,
  inspector: InspectorHandle | undefined,
) {
  return {
    url: service.url,
    version: packageVersion(),
    ...(service.listener.kind === 'socket' ? { socket: service.listener.path } : { port: service.listener.port }),
    pid: process.pid,
    state,
    store: store ? redact(store) : 'embedded',
    hostId: supervisor.hostId ?? null,
    harnesses: label,
    config: harnesses.kind === 'config' ? harnesses.loaded.file : null,
    tokenRequired: service.token !== undefined,
    // A single-use code for the page, not the token (which is in service.json only).
    login: service.loginUrl(),
    inspect: inspector ? values['inspect-url'] : null,
    recovery: values.recovery,
    checkpointEvery: values['checkpoint-every'] ?? null,
    boot: supervisor.bootReport(),
  };
}

/** Says the service is ready: one JSON line with --json, else lines for a person and then one per commit. */
function announce(ready: ReturnType<typeof readyOf>, supervisor: Supervisor, io: Io, say: (text: string) => void) {
  // --json: exactly one line when ready (scripts read the port from it), nothing else.
  if (io.json) {
    io.out(JSON.stringify({ listening: ready }));
    return;
  }
  say(
    `ordivon serve: ${ready.url}${'socket' in ready ? ` (socket ${ready.socket})` : ''}, state ${ready.state}${ready.hostId ? `, store ${ready.store} as ${ready.hostId}` : ''}, harnesses ${ready.harnesses}`,
  );
  if (ready.boot) say(`ordivon serve: validated ${bootLine(ready.boot)}`);
  if (ready.login) say(`page (this link works once): ${ready.login}`);
  // Progress: one line per commit. Other Hosts' commits are read and replayed only for a person at
  // a terminal, not for a service manager's log (the JSON lines are each Host's own).
  supervisor.subscribe(
    (c) =>
      say(
        `  ${c.taskId} r${c.revision} ${c.type} → ${c.state}${c.admitted ? '' : ` (${c.code})`}${c.host && c.host !== ready.hostId ? ` on ${c.host}` : ''}`,
      ),
    { remote: process.stderr.isTTY ? 'all' : 'none' },
  );
}

/** What a running serve holds, released by `drainAndStop`. */
interface Serving {
  service: RunningService;
  supervisor: Supervisor;
  stopHost(): Promise<void>;
  unobserve(): void;
  inspector: InspectorHandle | undefined;
  log: Logger;
}

/** Drains the service and lets running stages finish within `--drain-timeout`, then stops everything. */
async function drainAndStop(serving: Serving, signal: string, values: ServeArgs, say: (text: string) => void) {
  const { service, supervisor, log } = serving;
  const drainTimeoutMs = values['drain-timeout'] ?? DEFAULT_DRAIN_TIMEOUT_MS;
  say(`ordivon serve: ${signal}, draining (running stages may finish within ${drainTimeoutMs} ms)`);
  // The listener stays open: a client is told 503 `draining` and when to retry, not refused a connection.
  void service.drain({ retryAfterSeconds: Math.max(1, Math.ceil(drainTimeoutMs / 1000)) });
  const stages = await supervisor.finishRunning({ timeoutMs: drainTimeoutMs });
  log.info({ signal, drainTimeoutMs, ...stages }, 'drained');
  say(
    `ordivon serve: drained: ${stages.finished} of ${stages.running} running stages finished, ${stages.stopped} stopped (dispatched again after a restart as their retry policy allows)`,
  );
  await service.close();
  serving.unobserve();
  await serving.stopHost();
  serving.inspector?.stop();
  say('ordivon serve: stopped');
}

interface OpenedHost {
  supervisor: Supervisor;
  stop(): Promise<void>;
  /** The ready line's `harnesses`: `none`, `config (a, b)`, `scripted (codex, hermes via opencode)`. */
  label: string;
}

/** The bare supervisor, or the full Host with the configured or the scripted demo harnesses, started. */
async function openServeHost(
  harnesses: Harnesses,
  base: SupervisorOptions,
  say: (text: string) => void,
  step: (taskId: string, text: string) => void,
): Promise<OpenedHost> {
  const onStep = (taskId: string, text: string) => {
    step(taskId, text);
    say(`  [${taskId.slice(0, 13)}] ${text}`);
  };
  if (harnesses.kind === 'none') {
    if (harnesses.why === 'no-config')
      say('ordivon serve: no ./ordivon.config.json: the bare supervisor (--config FILE, or --demo-harnesses)');
    const supervisor = createSupervisor(base);
    await supervisor.start();
    return { supervisor, stop: () => supervisor.stop(), label: 'none' };
  }
  if (harnesses.kind === 'config') {
    const { config } = harnesses.loaded;
    const host = await openHost({
      ...base,
      harnesses: config.harnesses,
      ...hostOptionsOf(config),
      ...(await effectAdaptersOf(config, resolveStateRoot(base.state))),
      onStep,
    });
    return {
      supervisor: host.supervisor,
      stop: () => host.stop(),
      label: `config (${Object.keys(config.harnesses).join(', ')})`,
    };
  }
  const scripted = await demoHarnesses(harnesses.acpAgent);
  const host = await openHost({ ...base, harnesses: scripted.harnesses, onStep }).catch(async (error) => {
    await scripted.close();
    throw error;
  });
  return {
    supervisor: host.supervisor,
    stop: async () => {
      await host.stop();
      await scripted.close();
    },
    label: `scripted (codex, hermes via ${harnesses.acpAgent})`,
  };
}

/** `10,000 Tasks, 1,000,000 events in 9.8 s, full replay on 2 workers` (or `…, checkpointed: 9,990 from checkpoints, 10 with a tail, 0 in full`). */
export function bootLine(boot: BootSummary): string {
  const c = boot.checkpoint;
  const how = c
    ? `${count(boot.replayed)} replayed: ${count(c.trusted)} from checkpoints, ${count(c.tailReplayed)} of them with a tail, ${count(c.fullReplayed)} in full${c.codeChanged > 0 ? ` (${count(c.codeChanged)} with checkpoints from other machine code: full replay)` : ''}${c.headMismatch > 0 ? ` (${count(c.headMismatch)} with checkpoints not in the chain)` : ''}`
    : 'full replay';
  return `${count(boot.tasks)} Tasks, ${count(boot.events)} events in ${(boot.ms / 1000).toFixed(1)} s, ${how}${boot.workers > 0 ? ` on ${boot.workers} workers` : ''}`;
}
