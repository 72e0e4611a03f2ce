import type { AppConfig } from '@sdx/config';
import type { CounterReport, ProviderLookup, ReconcileReport, Services } from '@sdx/domain/runtime';
import type { RedisClient } from '@sdx/queue';

/** The service's processes; a task names those that run it. */
export type ProcessName = 'api' | 'worker' | 'scheduler';

/** What a task's pass (or a queue task's consumer) is given by the process that runs it. */
export interface TaskContext {
  services: Services;
  redisUrl: string;
  /** The worker's providers (the job attempts' queue task). */
  providers?: ProviderLookup;
  /** The worker's BullMQ connection (the job attempts' consumer); its `ready` wakes the tasks that wake on `redis-ready`. */
  connection?: RedisClient;
  /** Job attempts at once (WORKER_CONCURRENCY). */
  concurrency?: number;
  /** Webhook deliveries sent at once (WEBHOOK_CONCURRENCY). */
  webhookConcurrency?: number;
  /** Told of the reconcilers' reports (tests, drills). */
  hooks?: { onReconciled?(report: ReconcileReport): void; onCountersReconciled?(report: CounterReport): void };
}

/**
 * A lease: one process of the fleet runs the task at a time, and it runs once per `ttlMs`
 * across the fleet (see lease.ts). `setting` names what sets the time to live, for the docs.
 */
export interface LeasePolicy {
  ttlMs(config: AppConfig): number;
  setting: string;
}

/**
 * After a failed pass, the next runs `firstMs` later, doubling with each failure in a row
 * (`doubling`), never later than the task's interval; null: at the next interval.
 */
export interface RetryPolicy {
  firstMs: number | null;
  doubling: boolean;
}

/** What wakes a periodic task between its timer's passes. */
export type Wake = 'kick' | 'outbox' | 'redis-ready';

interface TaskBase {
  /** The task's name: its metric label, its lease's key, its row in docs/architecture.md. */
  name: string;
  processes: readonly ProcessName[];
  /** The domain function it runs, for the docs. */
  runs: string;
  /** None when absent. */
  lease?: LeasePolicy | null;
  /** Series of its own beside the runner's `sdx_background_*{task}`. */
  metrics?: string;
}

/**
 * A task run on a timer (with jitter), and at once when woken. Its pass returns true when it
 * took a full batch: with `drain`, passes follow at once until one comes back short.
 */
export interface PeriodicTask<S = unknown> extends TaskBase {
  kind: 'periodic';
  /** Milliseconds between passes; 0: the task is off in this deployment. */
  everyMs(config: AppConfig): number;
  /** The cadence as the docs say it (the setting and its default). */
  cadence: string;
  /** Delay of the first pass after start (default: at once). */
  firstAfterMs?(config: AppConfig): number;
  /** Share of the interval each wait is moved by at random, either way (0 to 1). */
  jitter: number;
  retry: RetryPolicy;
  /** The retry of each item a pass handles, as the docs say it (the domain function's own). */
  itemRetry?: string;
  drain?: boolean;
  wakes?: readonly Wake[];
  /** What a process needs to run the task (a transport, a client, a cursor); null: the process cannot run it and skips it. */
  setup?(context: TaskContext): S | null;
  teardown?(state: S): void;
  run(context: TaskContext, state: S): Promise<boolean | void>;
}

/** Wraps the handling of one queue entry: counted and timed in the task's metrics. */
export type Measure = <T>(work: () => Promise<T>) => Promise<T>;

export interface QueueConsumer {
  close(options?: { graceMs?: number }): Promise<void>;
}

/** A task that consumes a queue: its consumer started and closed by the runner, each entry measured. */
export interface QueueTask extends TaskBase {
  kind: 'queue';
  /** The queue as the docs say it, and what bounds its consumer. */
  cadence: string;
  /** The retry of an entry, as the docs say it (the consumer's own machinery does it). */
  retryDoc: string;
  /** Null: this process consumes nothing of it (its concurrency is 0). */
  start(context: TaskContext, measure: Measure): QueueConsumer | null;
}

export type BackgroundTask = PeriodicTask | QueueTask;

/** Declares a periodic task, its state's type inferred from `setup`. */
export function periodic<S = undefined>(task: Omit<PeriodicTask<S>, 'kind'>): PeriodicTask {
  return { kind: 'periodic', ...task };
}
