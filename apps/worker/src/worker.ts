import { type CounterReport, reconcileCounters, reconcileJobs, type ReconcileReport, runJobAttempt, type ProviderLookup, type Services } from '@sdx/domain/worker';
import { createWorkerRedis, startConsumer } from '@sdx/queue';
import { startBilling, startMailSender } from '@sdx/runtime';
import { type RunningWebhooks, startWebhooks } from './webhooks';
import { startDestinations } from './destinations';

/** A reconciler pass that failed is tried again this soon. */
const RECONCILE_RETRY_MS = 500;

export interface WorkerOptions {
  services: Services;
  providers: ProviderLookup;
  redisUrl: string;
  /** Attempts this process runs at once (WORKER_CONCURRENCY). */
  concurrency: number;
  /** Run the reconciler in this process (every worker may; it is safe concurrently). */
  reconcile?: boolean;
  /** Called with the report of every pass over the money's counters (tests). */
  onCountersReconciled?: (report: CounterReport) => void;
  /** Called with the report of every reconciler pass that did something (drills, metrics). */
  onReconciled?: (report: ReconcileReport) => void;
  /** Webhook deliveries sent at once (default WEBHOOK_CONCURRENCY); 0: no dispatcher, no delivery in this process. */
  webhookConcurrency?: number;
  /** Deliver exports to destinations from this process (default: yes). */
  destinations?: boolean;
  /** Send the mail outbox from this process (default: when SMTP_URL is set). */
  mail?: boolean;
  /** Charge due auto-recharges from this process (default: when STRIPE_SECRET_KEY is set). */
  billing?: boolean;
}

export interface RunningWorker {
  /**
   * Stops taking work and waits for the attempts in progress; with `graceMs`, those still
   * extracting after it hand their jobs back to the queue (WORKER_SHUTDOWN_GRACE_MS on SIGTERM).
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

/**
 * The extraction worker: the queue consumer (packages/queue) wired to the domain's job runner,
 * and the reconciler on a timer (and at once whenever the connection to Redis is back, so a
 * Redis that lost its data is refilled without waiting for the timer). Each job a queue entry
 * wakes is one attempt of runJobAttempt. Beside them, the webhook side (./webhooks.ts): the
 * outbox dispatcher, the delivery consumer and its sweep; the mail outbox's sender (./mail.ts); and
 * the auto-recharge charger (packages/runtime/src/billing.ts).
 */
export function startWorker(options: WorkerOptions): RunningWorker {
  const { services, providers } = options;
  const { log } = services;
  const connection = createWorkerRedis({ url: options.redisUrl, clusterNodes: services.config.redisClusterNodes });
  connection.on('error', (err) => log.debug({ err: err.message }, 'worker redis error'));
  const consumer = startConsumer({
    connection,
    queues: services.queues,
    concurrency: options.concurrency,
    run: async (jobId, attempt, handOver, shutdown) => {
      try {
        const outcome = await runJobAttempt(services, providers, jobId, { onDelivered: handOver, shutdown });
        if (outcome === 'handed back') log.info({ jobId, attempt }, 'attempt handed back at shutdown');
      } catch (err) {
        // The job stays running under its lease; when its heartbeat stops, the reconciler retries it.
        log.warn({ err, jobId, attempt }, 'attempt failed; the reconciler will retry it');
      }
    },
    onError: (message, context) => log.warn(context, message),
  });

  let reconciling: Promise<void> | null = null;
  let retry: NodeJS.Timeout | null = null;
  let closed = false;
  const reconcile = () => {
    if (reconciling || closed) return;
    if (retry) clearTimeout(retry);
    retry = null;
    reconciling = reconcileJobs(services)
      .then((report) => {
        if (report.requeued || report.failed || report.enqueued) {
          log.info({ requeued: report.requeued, failed: report.failed, enqueued: report.enqueued }, 'reconciled jobs');
          options.onReconciled?.(report);
        }
      })
      .catch((err) => {
        log.warn({ err: err instanceof Error ? err.message : String(err) }, 'reconcile failed; retrying shortly');
        // Redis or Postgres is coming back (the connections reconnect at their own pace): try
        // again soon rather than a whole interval later.
        if (!closed) {
          retry = setTimeout(reconcile, Math.min(RECONCILE_RETRY_MS, services.config.reconcileIntervalMs));
          retry.unref();
        }
      })
      .finally(() => {
        reconciling = null;
      });
  };
  const webhookConcurrency = options.webhookConcurrency ?? services.config.webhookConcurrency;
  const webhooks: RunningWebhooks | null =
    webhookConcurrency > 0 ? startWebhooks({ services, redisUrl: options.redisUrl, concurrency: webhookConcurrency }) : null;
  const mail = options.mail === false ? null : startMailSender(services);
  const destinations = options.destinations === false ? null : startDestinations(services);
  const billing = options.billing === false ? null : startBilling(services);

  const timer = options.reconcile === false ? null : setInterval(reconcile, services.config.reconcileIntervalMs);
  timer?.unref();
  if (options.reconcile !== false) connection.on('ready', reconcile);

  // The money's counters, recomputed from the reservations and the ledger: mended where a
  // release that did not keep one ran beside this one (an upgrade's window), a pass at start and
  // every COUNTER_RECONCILE_INTERVAL_MS.
  let counting: Promise<void> | null = null;
  const reconcileMoney = () => {
    if (counting || closed) return;
    counting = reconcileCounters(services.db)
      .then((report) => {
        if (report.fixes.length > 0) log.warn({ fixes: report.fixes.slice(0, 50), mended: report.fixes.length }, 'reconciled credit counters that differed from the ledger');
        options.onCountersReconciled?.(report);
      })
      .catch((err) => log.warn({ err: err instanceof Error ? err.message : String(err) }, 'counter reconcile failed; trying again at the next interval'))
      .finally(() => {
        counting = null;
      });
  };
  const countersEvery = services.config.counterReconcileIntervalMs;
  const counterTimer = options.reconcile === false || countersEvery === 0 ? null : setInterval(reconcileMoney, countersEvery);
  counterTimer?.unref();
  const firstCount = counterTimer ? setTimeout(reconcileMoney, Math.min(countersEvery, 1000)) : null;
  firstCount?.unref();

  return {
    async close(closeOptions = {}) {
      closed = true;
      if (timer) clearInterval(timer);
      if (counterTimer) clearInterval(counterTimer);
      if (firstCount) clearTimeout(firstCount);
      if (retry) clearTimeout(retry);
      await consumer.close(closeOptions);
      await webhooks?.close();
      await destinations?.close();
      await mail?.close();
      await billing?.close();
      await reconciling;
      await counting;
      connection.disconnect();
    },
  };
}
