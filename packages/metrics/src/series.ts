import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The service's Prometheus series, one registry per process. Processes expose it on GET
 * /metrics (the API on its port, the worker and scheduler on METRICS_PORT); the series and
 * what each means are listed in docs/deployment.md "Metrics".
 *
 * The counters and histograms are module-level on purpose: the code that records them (the
 * domain's admission and completion, the scheduler's dispatch) calls the plain functions below,
 * with nothing to inject, and a process has one registry to read. Recording costs a label
 * lookup and an add; nothing here does I/O until a scrape.
 */
export const registry = new Registry();

/** Seconds, from 5 ms to 1 min: API requests. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Seconds, from 50 ms to 1 h: waits and runs of jobs, dispatch lag. */
const JOB_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

export const httpRequests = new Counter({
  name: 'sdx_http_requests_total',
  help: 'HTTP requests answered, by method, route template and status code.',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});

export const httpRequestDuration = new Histogram({
  name: 'sdx_http_request_duration_seconds',
  help: 'Time from the request to its response, by method and route template.',
  labelNames: ['method', 'route'] as const,
  buckets: HTTP_BUCKETS,
  registers: [registry],
});

export const jobsAdmitted = new Counter({
  name: 'sdx_jobs_admitted_total',
  help: 'Jobs admitted (created and charged a reservation), by platform and operation.',
  labelNames: ['platform', 'operation'] as const,
  registers: [registry],
});

export const jobsFinished = new Counter({
  name: 'sdx_jobs_finished_total',
  help: 'Jobs that reached a final status (completed, failed, cancelled), by platform, operation and status.',
  labelNames: ['platform', 'operation', 'status'] as const,
  registers: [registry],
});

export const jobQueueWait = new Histogram({
  name: 'sdx_job_queue_wait_seconds',
  help: 'Time from a job attempt becoming runnable to a worker starting it.',
  labelNames: ['platform'] as const,
  buckets: JOB_BUCKETS,
  registers: [registry],
});

export const jobRun = new Histogram({
  name: 'sdx_job_run_seconds',
  help: 'Time a job attempt runs on a worker, from its start to its final commit or hand-back.',
  labelNames: ['platform'] as const,
  buckets: JOB_BUCKETS,
  registers: [registry],
});

export const creditsSettled = new Counter({
  name: 'sdx_credits_settled_total',
  help: 'Credits charged to workspaces when their jobs settle.',
  registers: [registry],
});

export const schedulerDispatchLag = new Histogram({
  name: 'sdx_scheduler_dispatch_lag_seconds',
  help: 'Time from a schedule occurrence being due to its dispatch.',
  buckets: JOB_BUCKETS,
  registers: [registry],
});

export const webhookDeliveries = new Counter({
  name: 'sdx_webhook_deliveries_total',
  help: 'Webhook delivery attempts, by outcome.',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** Seconds, from 5 ms to 10 min: passes of background tasks. */
const TASK_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/**
 * Background tasks (packages/runtime/src/background/catalog.ts), recorded by their one runner:
 * `outcome` is `ok`, `failed`, or `skipped` (a leased task whose lease another process holds).
 */
export const backgroundRuns = new Counter({
  name: 'sdx_background_runs_total',
  help: 'Passes of background tasks (and entries handled by queue tasks), by task and outcome.',
  labelNames: ['task', 'outcome'] as const,
  registers: [registry],
});

export const backgroundRunDuration = new Histogram({
  name: 'sdx_background_run_duration_seconds',
  help: 'Time a pass of a background task (or an entry of a queue task) took, by task.',
  labelNames: ['task'] as const,
  buckets: TASK_BUCKETS,
  registers: [registry],
});

/** Entries of one queue by state, as BullMQ's getJobCounts answers them. */
export type QueueCounts = Record<string, number>;

/** Reads the current counts of each queue, by queue name; called once per scrape. */
export type QueueCountsSource = () => Promise<Record<string, QueueCounts>>;

const queueSources = new Set<QueueCountsSource>();

/**
 * `sdx_queue_jobs{queue,state}`: queue entries per state, read from Redis at scrape time (an
 * entry wakes one job attempt, or the first attempts of up to 16 jobs admitted together).
 * Each process that serves /metrics and holds the queues registers a source.
 */
export const queueJobs = new Gauge({
  name: 'sdx_queue_jobs',
  help: 'Queue entries by queue and state, read at scrape time.',
  labelNames: ['queue', 'state'] as const,
  registers: [registry],
  async collect() {
    this.reset();
    for (const source of queueSources) {
      const counts = await source();
      for (const [queue, states] of Object.entries(counts)) {
        for (const [state, value] of Object.entries(states)) this.set({ queue, state }, value);
      }
    }
  },
});

/** Registers a source of queue counts for sdx_queue_jobs; returns its removal. */
export function addQueueCountsSource(source: QueueCountsSource): () => void {
  queueSources.add(source);
  return () => queueSources.delete(source);
}

/** The states sdx_queue_jobs reports, in BullMQ's names. */
export const QUEUE_STATES = ['waiting', 'prioritized', 'delayed', 'active', 'paused', 'waiting-children', 'failed', 'completed'] as const;

/** A source over BullMQ queues (anything with getJobCounts), keyed by queue name. */
export function bullQueueCounts(
  queues: ReadonlyArray<{ name: string; getJobCounts(...types: string[]): Promise<QueueCounts> }>,
): QueueCountsSource {
  return async () => {
    const counts = await Promise.all(queues.map((queue) => queue.getJobCounts(...QUEUE_STATES)));
    return Object.fromEntries(queues.map((queue, i) => [queue.name, counts[i]]));
  };
}

let processMetrics = false;

/**
 * Node's own series (process CPU and memory, event loop lag, GC, handles) for this process.
 * Called once by each process's entry point, not on import, so tests start no timers.
 */
export function collectProcessMetrics(labels: Record<string, string> = {}): void {
  if (processMetrics) return;
  processMetrics = true;
  collectDefaultMetrics({ register: registry, labels });
}

// The plain functions the domain, the worker and the scheduler call.

export function recordJobsAdmitted(platform: string, operation: string, count = 1): void {
  jobsAdmitted.inc({ platform, operation }, count);
}

export function recordJobFinished(platform: string, operation: string, status: string): void {
  jobsFinished.inc({ platform, operation, status });
}

export function observeJobQueueWait(platform: string, seconds: number): void {
  jobQueueWait.observe({ platform }, Math.max(0, seconds));
}

export function observeJobRun(platform: string, seconds: number): void {
  jobRun.observe({ platform }, Math.max(0, seconds));
}

export function recordCreditsSettled(credits: number): void {
  if (credits > 0) creditsSettled.inc(credits);
}

export function observeDispatchLag(seconds: number): void {
  schedulerDispatchLag.observe(Math.max(0, seconds));
}

export function recordWebhookDelivery(outcome: string): void {
  webhookDeliveries.inc({ outcome });
}

// Live sources (issue 38): attempts per adapter and outcome, sources marked down, and their
// health as the database holds it (shared by every worker), read at scrape time.

export const sourceAttempts = new Counter({
  name: 'sdx_source_attempts_total',
  help: 'Live sources tried by job attempts, by adapter, source (official or vendor) and outcome (served or failed).',
  labelNames: ['provider', 'source', 'outcome'] as const,
  registers: [registry],
});

export const sourceMarkedDown = new Counter({
  name: 'sdx_source_marked_down_total',
  help: 'Times a live source was marked down after 10 authentication failures in a row, by adapter.',
  labelNames: ['provider'] as const,
  registers: [registry],
});

/** One live source's health, as GET /v1/platforms shows it. */
export interface SourceHealthSample {
  provider: string;
  source: string;
  down: boolean;
  last_success_at: Date | null;
  error_rate_15m: number | null;
  quota_remaining: number | null;
}

export type SourceHealthSource = () => Promise<SourceHealthSample[]>;
const healthSources = new Set<SourceHealthSource>();

function healthGauge(name: string, help: string, value: (s: SourceHealthSample) => number | null): Gauge<'provider' | 'source'> {
  return new Gauge({
    name,
    help,
    labelNames: ['provider', 'source'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const read of healthSources) {
        for (const sample of await read()) {
          const v = value(sample);
          if (v !== null) this.set({ provider: sample.provider, source: sample.source }, v);
        }
      }
    },
  });
}

export const sourceUp = healthGauge('sdx_source_up', 'Whether a live source is up (0 while marked down), read at scrape time.', (s) =>
  s.down ? 0 : 1,
);
export const sourceLastSuccess = healthGauge(
  'sdx_source_last_success_timestamp_seconds',
  'When a live source last served an attempt (Unix seconds).',
  (s) => (s.last_success_at ? s.last_success_at.getTime() / 1000 : null),
);
export const sourceErrorRate = healthGauge(
  'sdx_source_error_rate_15m',
  "Share of a live source's tries that failed over the last 15 minutes.",
  (s) => s.error_rate_15m,
);
export const sourceQuotaRemaining = healthGauge(
  'sdx_source_quota_remaining',
  'Quota a live source has left, where the platform reports it or publishes its costs.',
  (s) => s.quota_remaining,
);

/** Registers a reader of the live sources' health for the sdx_source_* gauges; returns its removal. */
export function addSourceHealthSource(source: SourceHealthSource): () => void {
  healthSources.add(source);
  return () => healthSources.delete(source);
}

export function recordSourceAttempt(provider: string, source: string, outcome: string): void {
  sourceAttempts.inc({ provider, source, outcome });
}

export function recordSourceDown(provider: string): void {
  sourceMarkedDown.inc({ provider });
}

/** The exposition body and its content type, for a GET /metrics handler. */
export async function scrape(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}
