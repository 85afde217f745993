import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Supervisor, Committed, LeaseEvent } from '../../kernel/index.js';

/**
 * The service's Prometheus metrics (`GET /metrics`), on a Registry of its own: nothing else in the
 * process (another service, a test) shares its counters. Gauges are read from the supervisor
 * when scraped; counters move as commits, sends and lease changes are reported to them. The
 * process's own (prom-client's default metrics: CPU, memory, heap, event-loop lag, handles, GC)
 * are on the same registry, read when scraped.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly admissions: Counter<'type'>;
  private readonly refusals: Counter<'code'>;
  private readonly dispatches: Counter<'status'>;
  private readonly jobs: Counter<'status'>;
  private readonly takeovers: Counter;
  private readonly appendSeconds: Histogram<'operation'>;

  private sup: Supervisor | undefined;

  /** Created before the supervisor (lease changes come during its boot); `attach` gives it the supervisor its gauges read. */
  constructor() {
    const registers = [this.registry];
    const sup = () => this.sup;
    collectDefaultMetrics({ register: this.registry });
    this.admissions = new Counter({
      name: 'ordivon_admissions_total',
      help: 'Events this Host admitted, by event type',
      labelNames: ['type'],
      registers,
    });
    this.refusals = new Counter({
      name: 'ordivon_refusals_total',
      help: 'Events this Host refused (retained in the journal or not written), by code',
      labelNames: ['code'],
      registers,
    });
    this.dispatches = new Counter({
      name: 'ordivon_dispatches_total',
      help: 'Dispatch events this Host admitted, by status (intended, acknowledged, lost, reconciled)',
      labelNames: ['status'],
      registers,
    });
    this.jobs = new Counter({
      name: 'ordivon_jobs_total',
      help: 'Provider jobs whose end this Host recorded (run.observe), by job status',
      labelNames: ['status'],
      registers,
    });
    this.takeovers = new Counter({
      name: 'ordivon_lease_takeovers_total',
      help: 'Leases this Host acquired on Tasks some Host held before (lease epoch above 1)',
      registers,
    });
    this.appendSeconds = new Histogram({
      name: 'ordivon_append_seconds',
      help: 'Time from a request handing an event or a spec to the supervisor to its answer (the commit included)',
      labelNames: ['operation'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    new Gauge({
      name: 'ordivon_frontier_depth',
      help: 'Tasks this Host serves that have frontier work waiting, by frontier',
      labelNames: ['frontier'],
      registers,
      collect() {
        this.reset();
        for (const t of sup()?.listTasks() ?? []) if (t.frontier !== 'none') this.inc({ frontier: t.frontier });
      },
    });
    new Gauge({
      name: 'ordivon_leases_held',
      help: 'Task leases this Host holds on the shared PostgreSQL history (0 on the embedded store)',
      registers,
      collect() {
        this.set(sup()?.history?.leases().length ?? 0);
      },
    });
    new Gauge({
      name: 'ordivon_boot_duration_seconds',
      help: "How long this Host's boot validation took",
      registers,
      collect() {
        this.set((sup()?.bootReport()?.ms ?? 0) / 1000);
      },
    });
  }

  attach(sup: Supervisor): void {
    this.sup = sup;
  }

  /** A commit this Host wrote (admitted, or refused and retained). */
  committed(c: Committed, status?: string): void {
    if (!c.admitted) {
      this.refusals.inc({ code: c.code ?? 'unknown' });
      return;
    }
    this.admissions.inc({ type: c.type });
    const dispatch = DISPATCH_STATUS[c.type];
    if (dispatch) this.dispatches.inc({ status: dispatch });
    if (c.type === 'run.observe') this.jobs.inc({ status: status ?? 'unknown' });
  }

  /** A send refused without being written (`invalid_transition`, `revision_conflict`, …). */
  refusedUnwritten(code: string): void {
    this.refusals.inc({ code });
  }

  lease(event: LeaseEvent): void {
    if (event.kind === 'acquired' && event.epoch > 1) this.takeovers.inc();
  }

  /** Starts timing one append; the returned function records it. */
  time(operation: 'send' | 'create'): () => void {
    return this.appendSeconds.startTimer({ operation });
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

const DISPATCH_STATUS: Record<string, string> = {
  'dispatch.intend': 'intended',
  'dispatch.ack': 'acknowledged',
  'dispatch.lost': 'lost',
  'dispatch.reconcile': 'reconciled',
};
