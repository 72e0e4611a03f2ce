import { performance } from 'node:perf_hooks';
import { backgroundRunDuration, backgroundRuns } from '@sdx/metrics';
import { createSubscriberRedis, type RedisClient } from '@sdx/queue';
import { leaseKey, RedisLease } from './lease';
import type { BackgroundTask, PeriodicTask, QueueConsumer, QueueTask, TaskContext } from './task';
import { wakeChannel } from './wake';

export interface RunnerOptions {
  /** The tasks this runner runs (taken from the catalog: `tasksOf`). */
  tasks: readonly BackgroundTask[];
  context: TaskContext;
  /** Where leases are kept (a fail-fast connection); required when a task has a lease. */
  redis?: RedisClient;
  /** Listen for wakes sent over Redis by other processes (`wakeOverRedis`), such as the API's after a commit that queued mail. */
  remoteWakes?: boolean;
  /** Intervals in place of the catalog's, by task (tests). */
  everyMs?: Readonly<Record<string, number>>;
  /** Random numbers in [0, 1) for the jitter. */
  random?: () => number;
}

/**
 * The one runner of background work: the periodic tasks each on their timer (moved by their
 * jitter), woken at once by a kick, the outbox signal or Redis coming back; their passes never
 * overlap within a process, and a leased task's pass runs only while this process holds its
 * lease. A failed pass is logged (warn, with the task and the failures in a row) and retried
 * per its policy. Queue tasks' consumers are started and closed here, each entry measured.
 * Every pass is counted in `sdx_background_runs_total{task,outcome}` and timed in
 * `sdx_background_run_duration_seconds{task}`.
 */
export class BackgroundRunner {
  private readonly periodic = new Map<string, PeriodicSlot>();
  private readonly consumers: { task: QueueTask; consumer: QueueConsumer }[] = [];
  private readonly unlisten: (() => void)[] = [];
  private subscriber: RedisClient | null = null;
  private stopped = false;

  constructor(private readonly options: RunnerOptions) {
    const names = new Set<string>();
    for (const task of options.tasks) {
      if (names.has(task.name)) throw new Error(`background task ${task.name} given twice`);
      names.add(task.name);
      if (task.lease && !options.redis) throw new Error(`background task ${task.name} has a lease: the runner needs Redis`);
    }
  }

  /** The names of the tasks this runner runs (a periodic task is left out when its interval is 0 or its setup declined). */
  get running(): string[] {
    return [...this.periodic.keys(), ...this.consumers.map((c) => c.task.name)];
  }

  start(): this {
    const { context } = this.options;
    const { config, log } = context.services;
    for (const task of this.options.tasks) {
      if (task.kind === 'queue') {
        const consumer = task.start(context, (work) => this.measure(task.name, work));
        if (consumer) this.consumers.push({ task, consumer });
        continue;
      }
      const everyMs = this.options.everyMs?.[task.name] ?? task.everyMs(config);
      if (everyMs <= 0) continue;
      const state = task.setup ? task.setup(context) : undefined;
      if (state === null) continue;
      const lease = task.lease ? new RedisLease(this.options.redis!, leaseKey(config.redisPrefix, task.name)) : null;
      const slot = new PeriodicSlot(task, state, everyMs, lease, context, this.options.random ?? Math.random);
      this.periodic.set(task.name, slot);
      for (const wake of task.wakes ?? []) {
        if (wake === 'outbox') this.unlisten.push(context.services.outbox.listen(() => slot.trigger()));
        if (wake === 'redis-ready' && context.connection) {
          const connection = context.connection;
          const ready = () => slot.trigger();
          connection.on('ready', ready);
          this.unlisten.push(() => connection.off('ready', ready));
        }
      }
      slot.start(task.firstAfterMs?.(config) ?? 0);
    }
    if (this.options.remoteWakes && [...this.periodic.values()].some((slot) => slot.task.wakes?.includes('kick'))) {
      const subscriber = createSubscriberRedis({ url: context.redisUrl, clusterNodes: config.redisClusterNodes });
      subscriber.on('error', (err: Error) => log.debug({ err: err.message }, 'background wake subscriber error'));
      subscriber.on('message', (_channel: string, name: string) => this.kick(name));
      void subscriber
        .subscribe(wakeChannel(config.redisPrefix))
        .catch((err: Error) => log.warn({ err: err.message }, 'background wakes not subscribed'));
      this.subscriber = subscriber;
    }
    return this;
  }

  /** Runs the task's pass now, or right after the one in progress (a task this runner does not run: nothing). */
  kick(name: string): void {
    const slot = this.periodic.get(name);
    if (slot?.task.wakes?.includes('kick')) slot.trigger();
  }

  /** Resolves once the task's pass in progress (if any) has ended. */
  async idle(name: string): Promise<void> {
    await this.periodic.get(name)?.idle();
  }

  /**
   * Starts no pass more, waits for those in progress, gives the leases up, and closes the queue
   * consumers (with `graceMs`, the job attempts still extracting after it hand their jobs back).
   */
  async stop(options: { graceMs?: number } = {}): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const stop of this.unlisten.splice(0)) stop();
    this.subscriber?.disconnect();
    await Promise.all(this.consumers.map(({ consumer }) => consumer.close(options)));
    await Promise.all([...this.periodic.values()].map((slot) => slot.stop()));
  }

  private async measure<T>(task: string, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      const result = await work();
      backgroundRuns.inc({ task, outcome: 'ok' });
      return result;
    } catch (error) {
      backgroundRuns.inc({ task, outcome: 'failed' });
      throw error;
    } finally {
      backgroundRunDuration.observe({ task }, (performance.now() - started) / 1000);
    }
  }
}

/** One periodic task in one runner: its timer, its pass in progress, its failures in a row. */
class PeriodicSlot {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private failures = 0;

  constructor(
    readonly task: PeriodicTask,
    private readonly state: unknown,
    private readonly everyMs: number,
    private readonly lease: RedisLease | null,
    private readonly context: TaskContext,
    private readonly random: () => number,
  ) {}

  start(firstAfterMs: number): void {
    this.schedule(firstAfterMs);
  }

  trigger(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.clearTimer();
    this.running = this.pass().finally(() => {
      this.running = null;
    });
  }

  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.clearTimer();
    await this.idle();
    this.task.teardown?.(this.state);
    await this.lease?.release().catch(() => undefined);
  }

  private schedule(ms: number): void {
    this.clearTimer();
    if (this.stopped) return;
    this.timer = setTimeout(() => this.trigger(), ms);
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** The interval moved by the jitter, at random either way. */
  private jittered(ms: number): number {
    return Math.max(1, Math.round(ms * (1 + this.task.jitter * (2 * this.random() - 1))));
  }

  private async pass(): Promise<void> {
    const { task } = this;
    const { config, log } = this.context.services;
    const started = performance.now();
    let renew: NodeJS.Timeout | null = null;
    try {
      if (this.lease) {
        const ttlMs = task.lease!.ttlMs(config);
        if (!(await this.lease.take(ttlMs))) {
          backgroundRuns.inc({ task: task.name, outcome: 'skipped' });
          this.failures = 0;
          this.schedule(this.jittered(this.everyMs));
          return;
        }
        // Held while the pass runs, however long it takes.
        renew = setInterval(() => void this.lease!.take(ttlMs).catch(() => undefined), Math.max(10, ttlMs / 3));
        renew.unref();
      }
      do {
        this.again = false;
        while (!this.stopped && (await task.run(this.context, this.state)) === true && task.drain);
      } while (this.again && !this.stopped);
      backgroundRuns.inc({ task: task.name, outcome: 'ok' });
      this.failures = 0;
      this.schedule(this.jittered(this.everyMs));
    } catch (error) {
      backgroundRuns.inc({ task: task.name, outcome: 'failed' });
      this.failures += 1;
      const retryInMs = this.retryDelay();
      log.warn(
        { task: task.name, err: error instanceof Error ? error.message : String(error), failures: this.failures, retryInMs },
        'background task failed',
      );
      this.schedule(retryInMs);
    } finally {
      if (renew) clearInterval(renew);
      backgroundRunDuration.observe({ task: task.name }, (performance.now() - started) / 1000);
    }
  }

  /** When the next pass runs after this many failures in a row: the task's retry policy, never later than its interval. */
  private retryDelay(): number {
    const { firstMs, doubling } = this.task.retry;
    if (firstMs === null) return this.jittered(this.everyMs);
    const delay = doubling ? firstMs * 2 ** Math.min(this.failures - 1, 20) : firstMs;
    return Math.min(delay, this.everyMs);
  }
}
