import type { CounterReport, ProviderLookup, ReconcileReport, Services } from '@sdx/domain/worker';
import { createFastRedis, createWorkerRedis } from '@sdx/queue';
import { BackgroundRunner, tasksOf } from '@sdx/runtime';

export interface WorkerOptions {
  services: Services;
  providers: ProviderLookup;
  redisUrl: string;
  /** Attempts this process runs at once (WORKER_CONCURRENCY). */
  concurrency: number;
  /** Run the reconcilers (`reconcile-jobs`, `reconcile-counters`) in this process (default: yes). */
  reconcile?: boolean;
  /** Called with the report of every pass over the money's counters (tests). */
  onCountersReconciled?: (report: CounterReport) => void;
  /** Called with the report of every reconciler pass that did something (drills, metrics). */
  onReconciled?: (report: ReconcileReport) => void;
  /** Webhook deliveries sent at once (default WEBHOOK_CONCURRENCY); 0: no dispatcher, no delivery, no sweep in this process. */
  webhookConcurrency?: number;
  /** Deliver exports to destinations from this process (default: yes). */
  destinations?: boolean;
  /** Send the mail outbox from this process (default: when SMTP_URL or the dev outbox is set). */
  mail?: boolean;
  /** Charge due auto-recharges from this process (default: when STRIPE_SECRET_KEY is set). */
  billing?: boolean;
  /** Intervals in place of the catalog's, by task (tests). */
  everyMs?: Readonly<Record<string, number>>;
}

export interface RunningWorker {
  /** The background runner of this worker (its tasks, `kick`, `idle`). */
  readonly runner: BackgroundRunner;
  /**
   * Stops taking work and waits for the attempts in progress; with `graceMs`, those still
   * extracting after it hand their jobs back to the queue (WORKER_SHUTDOWN_GRACE_MS on SIGTERM).
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

/** The worker's tasks the options turn off. */
function excluded(options: WorkerOptions): Set<string> {
  const off = new Set<string>();
  if (options.reconcile === false) for (const name of ['reconcile-jobs', 'reconcile-counters']) off.add(name);
  if (options.destinations === false) off.add('destination-deliveries');
  if (options.mail === false) off.add('mail');
  if (options.billing === false) off.add('recharge');
  return off;
}

/**
 * The worker process's background work: the catalog's worker tasks
 * (packages/runtime/src/background/catalog.ts) on one runner. The job attempts' consumer
 * (packages/queue) wired to the domain's job runner on this worker's BullMQ connection, whose
 * `ready` also wakes the reconciler (a Redis that lost its data is refilled without waiting for
 * the timer); the webhook side (dispatcher, delivery consumer, sweep); deliveries to
 * destinations; the mail outbox; the auto-recharge charger; and the money's counters. Wakes
 * sent over Redis (the API's, after a commit that queued mail) reach the mail and recharge
 * tasks at once.
 */
export function startWorker(options: WorkerOptions): RunningWorker {
  const { services } = options;
  const { log } = services;
  const connection = createWorkerRedis({ url: options.redisUrl, clusterNodes: services.config.redisClusterNodes });
  connection.on('error', (err: Error) => log.debug({ err: err.message }, 'worker redis error'));
  // Leases on a fail-fast connection: a pass whose lease cannot be taken fails and is retried.
  const leases = createFastRedis({ url: options.redisUrl, clusterNodes: services.config.redisClusterNodes });
  leases.on('error', (err: Error) => log.debug({ err: err.message }, 'worker lease redis error'));
  const off = excluded(options);
  const runner = new BackgroundRunner({
    tasks: tasksOf('worker').filter((task) => !off.has(task.name)),
    context: {
      services,
      redisUrl: options.redisUrl,
      providers: options.providers,
      connection,
      concurrency: options.concurrency,
      webhookConcurrency: options.webhookConcurrency,
      hooks: { onReconciled: options.onReconciled, onCountersReconciled: options.onCountersReconciled },
    },
    redis: leases,
    remoteWakes: true,
    everyMs: options.everyMs,
  }).start();

  return {
    runner,
    async close(closeOptions = {}) {
      await runner.stop(closeOptions);
      connection.disconnect();
      leases.disconnect();
    },
  };
}
