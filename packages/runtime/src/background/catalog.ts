import {
  chargeDueRecharges,
  deliverToDestinations,
  dispatchEvents,
  dispatchMonitors,
  endGracePeriods,
  reconcileCounters,
  reconcileJobs,
  recoverDeliveries,
  runRetention,
  sendMailBatch,
  sweepOrphanedObjects,
  type SweepState,
} from '@sdx/domain/runtime';
import {
  DEFAULT_CLAIM_LIMIT,
  DEFAULT_DISPATCH_CONCURRENCY,
  dispatchAllDue,
  RECOVER_EVERY_MS,
  RECOVERY_GRACE_MS,
  recoverStalledRuns,
} from '@sdx/scheduler-engine';
import { mailTransportOf } from '../mail';
import { startJobAttempts, startWebhookDeliveries } from './consumers';
import { type BackgroundTask, periodic, type ProcessName, type RetryPolicy } from './task';

/** Retry at the task's next interval. */
const NEXT_INTERVAL: RetryPolicy = { firstMs: null, doubling: false };

/**
 * Every piece of background work of the service, in one place: what it runs, which process
 * runs it, how often (or from which queue), under which lease, and how a failure is retried.
 * One runner (runner.ts) runs them; a process runs the tasks that name it (`tasksOf`), and the
 * API runs none (docs/deployment.md "Background work"). docs/architecture.md "Background work"
 * lists them as a table that `catalogTable` renders (packages/runtime/test/catalog.test.ts
 * compares the two).
 */
export const CATALOG: readonly BackgroundTask[] = [
  {
    kind: 'queue',
    name: 'job-attempts',
    processes: ['worker'],
    runs: '`runJobAttempt`',
    cadence: 'queues `extract-jobs`, `extract-batch-children`; `WORKER_CONCURRENCY` slots',
    metrics: '`sdx_job_run_seconds`, `sdx_job_queue_wait_seconds`',
    retryDoc: "the job's lease and `retryLater` (`JOB_RETRY_BASE_MS`, doubling); an entry lost: `reconcile-jobs`",
    start: startJobAttempts,
  },
  periodic({
    name: 'reconcile-jobs',
    processes: ['worker'],
    runs: '`reconcileJobs`',
    everyMs: (config) => config.reconcileIntervalMs,
    cadence: '`RECONCILE_INTERVAL_MS` (5 s), and when Redis is back',
    // The first pass when the worker's connection is ready (its `ready` wakes it), else after an interval.
    firstAfterMs: (config) => config.reconcileIntervalMs,
    jitter: 0.1,
    retry: { firstMs: 500, doubling: false },
    wakes: ['redis-ready'],
    async run({ services, hooks }) {
      const report = await reconcileJobs(services);
      if (report.requeued || report.failed || report.enqueued) {
        services.log.info({ requeued: report.requeued, failed: report.failed, enqueued: report.enqueued }, 'reconciled jobs');
        hooks?.onReconciled?.(report);
      }
    },
  }),
  periodic({
    name: 'reconcile-counters',
    processes: ['worker'],
    runs: '`reconcileCounters`',
    everyMs: (config) => config.counterReconcileIntervalMs,
    cadence: '`COUNTER_RECONCILE_INTERVAL_MS` (10 min; 0: off), the first 1 s after start',
    firstAfterMs: (config) => Math.min(config.counterReconcileIntervalMs, 1000),
    jitter: 0.1,
    retry: NEXT_INTERVAL,
    lease: { ttlMs: (config) => config.counterReconcileIntervalMs, setting: '`COUNTER_RECONCILE_INTERVAL_MS`' },
    async run({ services, hooks }) {
      const report = await reconcileCounters(services.db);
      if (report.fixes.length > 0)
        services.log.warn(
          { fixes: report.fixes.slice(0, 50), mended: report.fixes.length },
          'reconciled credit counters that differed from the ledger',
        );
      hooks?.onCountersReconciled?.(report);
    },
  }),
  periodic({
    name: 'webhook-dispatch',
    processes: ['worker'],
    runs: '`dispatchEvents`',
    everyMs: () => 200,
    cadence: '200 ms, and when this process wrote events; until the outbox is empty',
    jitter: 0.1,
    retry: NEXT_INTERVAL,
    drain: true,
    wakes: ['outbox'],
    setup: ({ services, webhookConcurrency }) => ((webhookConcurrency ?? services.config.webhookConcurrency) > 0 ? {} : null),
    run: async ({ services }) => (await dispatchEvents(services)) > 0,
  }),
  {
    kind: 'queue',
    name: 'webhook-deliveries',
    processes: ['worker'],
    runs: '`attemptDelivery`',
    cadence: 'queue `webhook-deliveries`; `WEBHOOK_CONCURRENCY` slots, 32 in flight per webhook',
    metrics: '`sdx_webhook_deliveries_total`',
    retryDoc: "the delivery's schedule (webhooks.md); BullMQ lock 30 s",
    start: startWebhookDeliveries,
  },
  periodic({
    name: 'webhook-sweep',
    processes: ['worker'],
    runs: '`recoverDeliveries`',
    everyMs: () => 5_000,
    cadence: '5 s',
    jitter: 0.1,
    retry: NEXT_INTERVAL,
    setup: ({ services, webhookConcurrency }) => ((webhookConcurrency ?? services.config.webhookConcurrency) > 0 ? {} : null),
    async run({ services }) {
      const requeued = await recoverDeliveries(services);
      if (requeued > 0) services.log.info({ deliveries: requeued }, 're-queued webhook deliveries');
    },
  }),
  periodic({
    name: 'destination-deliveries',
    processes: ['worker'],
    runs: '`deliverToDestinations`',
    everyMs: () => 500,
    cadence: '500 ms; until none is due',
    jitter: 0.1,
    retry: NEXT_INTERVAL,
    drain: true,
    run: async ({ services }) => (await deliverToDestinations(services)) > 0,
  }),
  periodic({
    name: 'mail',
    processes: ['worker'],
    runs: '`sendMailBatch` (mail requests, then the outbox)',
    everyMs: () => 2_000,
    cadence: '2 s, and when woken (`TaskWake`, over Redis from the API); until a batch is short',
    jitter: 0.1,
    retry: NEXT_INTERVAL,
    drain: true,
    wakes: ['kick'],
    itemRetry: 'each mail: `mailRetryDelay`, `MAIL_MAX_ATTEMPTS` tries',
    // SMTP_URL's server, or outside production without it the dev outbox; neither: nothing is queued.
    setup: ({ services }) => mailTransportOf(services.config),
    teardown: (transport) => transport.close?.(),
    run: ({ services }, transport) => sendMailBatch({ ...services, transport }),
  }),
  periodic({
    name: 'recharge',
    processes: ['worker'],
    runs: '`chargeDueRecharges`',
    everyMs: () => 1_000,
    cadence: '1 s, and when woken; until a batch is short (with `STRIPE_SECRET_KEY` and `STRIPE_WEBHOOK_SECRET`)',
    jitter: 0.1,
    retry: NEXT_INTERVAL,
    drain: true,
    wakes: ['kick'],
    itemRetry: 'each payment: `RECHARGE_RETRY_DELAYS_MS` while Stripe fails',
    // Without a payment gateway (STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET unset) the task does not run.
    setup: ({ services }) => services.payments ?? null,
    run: ({ services }, payments) => chargeDueRecharges({ ...services, payments }),
  }),
  periodic({
    name: 'schedule-dispatch',
    processes: ['scheduler'],
    runs: '`dispatchAllDue`',
    everyMs: (config) => config.schedulerTickMs,
    cadence: '`SCHEDULER_TICK_MS` (1 s); claim rounds until one is short',
    metrics: '`sdx_scheduler_dispatch_lag_seconds`',
    jitter: 0,
    retry: NEXT_INTERVAL,
    async run({ services }) {
      const due = await dispatchAllDue(services, { limit: DEFAULT_CLAIM_LIMIT });
      if (due.runs.length > 0 || due.dropped > 0)
        services.log.info({ claimed: due.claimed, runs: due.runs.length, dropped: due.dropped }, 'scheduler pass');
    },
  }),
  periodic({
    name: 'schedule-recovery',
    processes: ['scheduler'],
    runs: '`recoverStalledRuns`',
    everyMs: () => RECOVER_EVERY_MS,
    cadence: '1 s',
    jitter: 0.1,
    retry: NEXT_INTERVAL,
    async run({ services }) {
      const recovered = await recoverStalledRuns(services, { graceMs: RECOVERY_GRACE_MS, concurrency: DEFAULT_DISPATCH_CONCURRENCY });
      if (recovered.length > 0) services.log.info({ recovered: recovered.length }, 'scheduler recovered runs');
    },
  }),
  periodic({
    name: 'monitor-runs',
    processes: ['scheduler'],
    runs: '`dispatchMonitors`',
    everyMs: (config) => config.schedulerTickMs,
    cadence: '`SCHEDULER_TICK_MS` (1 s)',
    jitter: 0,
    retry: NEXT_INTERVAL,
    async run({ services }) {
      const monitors = await dispatchMonitors(services);
      if (monitors.claimed > 0)
        services.log.info({ monitorRuns: monitors.claimed, advanced: monitors.advanced }, 'monitor runs dispatched');
    },
  }),
  periodic({
    name: 'retention',
    processes: ['scheduler'],
    runs: '`runRetention`',
    everyMs: (config) => config.retentionIntervalMs,
    cadence: '`RETENTION_INTERVAL_MS` (1 h; 0: off)',
    jitter: 0.05,
    retry: NEXT_INTERVAL,
    lease: { ttlMs: (config) => config.retentionIntervalMs, setting: '`RETENTION_INTERVAL_MS`' },
    async run({ services }) {
      const { config } = services;
      const done = await runRetention(services, services.clock.now(), {
        resultRetentionDays: config.resultRetentionDays,
        monitorRetentionDays: config.monitorRetentionDays,
      });
      if (Object.values(done).some((n) => n > 0)) services.log.info(done, 'retention purge');
    },
  }),
  periodic({
    name: 'result-object-sweep',
    processes: ['scheduler'],
    runs: '`sweepOrphanedObjects`',
    everyMs: (config) => config.retentionIntervalMs,
    cadence: '`RETENTION_INTERVAL_MS` (with `S3_BUCKET`)',
    jitter: 0.05,
    retry: NEXT_INTERVAL,
    lease: { ttlMs: (config) => config.retentionIntervalMs, setting: '`RETENTION_INTERVAL_MS`' },
    // Each pass goes on where the last one of this process stopped.
    setup: ({ services }): SweepState | null => (services.resultObjects ? { after: null } : null),
    run: async ({ services }, sweep) => void (await sweepOrphanedObjects(services, sweep)),
  }),
  periodic({
    name: 'plan-grace',
    processes: ['scheduler'],
    runs: '`endGracePeriods`',
    everyMs: (config) => config.planGraceIntervalMs,
    cadence: '`PLAN_GRACE_INTERVAL_MS` (10 min)',
    jitter: 0.05,
    retry: NEXT_INTERVAL,
    lease: { ttlMs: (config) => config.planGraceIntervalMs, setting: '`PLAN_GRACE_INTERVAL_MS`' },
    run: async ({ services }) => void (await endGracePeriods(services)),
  }),
];

/** The catalog's tasks a process runs. */
export function tasksOf(process: ProcessName): BackgroundTask[] {
  return CATALOG.filter((task) => task.processes.includes(process));
}

/** The task of that name (tests, and harnesses that run one task alone). */
export function taskNamed(name: string): BackgroundTask {
  const task = CATALOG.find((t) => t.name === name);
  if (!task) throw new Error(`no background task ${name}`);
  return task;
}

/** The catalog as the rows of docs/architecture.md's table: task, process, cadence or queue, lease, retry, what it runs, metrics. */
export function catalogTable(): string[][] {
  return CATALOG.map((task) => [
    `\`${task.name}\``,
    task.processes.join(', '),
    task.kind === 'periodic' && task.jitter > 0 ? `${task.cadence}; ± ${Math.round(task.jitter * 100)} %` : task.cadence,
    task.lease ? `Redis, held for ${task.lease.setting}` : 'none',
    task.kind === 'queue' ? task.retryDoc : [retryDoc(task.retry), task.itemRetry].filter(Boolean).join('; '),
    task.runs,
    [`\`{task="${task.name}"}\``, task.metrics].filter(Boolean).join(', '),
  ]);
}

function retryDoc(retry: RetryPolicy): string {
  if (retry.firstMs === null) return 'next interval';
  return `after ${retry.firstMs} ms${retry.doubling ? ', doubling' : ''}, at most the interval`;
}
