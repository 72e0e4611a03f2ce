import { Worker } from 'bullmq';
import { attemptDelivery, runJobAttempt } from '@sdx/domain/runtime';
import { createWorkerRedis, type DeliveryPayload, QUEUES, startConsumer } from '@sdx/queue';
import type { Measure, QueueConsumer, TaskContext } from './task';

/** Attempts to one webhook this process has in flight at once: a slow or dead receiver holds no more. */
export const PER_WEBHOOK_IN_FLIGHT = 32;

/**
 * The job attempts' consumer (packages/queue `startConsumer`) on the worker's connection: each
 * entry wakes one attempt of `runJobAttempt`. An attempt that throws leaves its job running
 * under its lease; when its heartbeat stops, the reconciler retries it.
 */
export function startJobAttempts(context: TaskContext, measure: Measure): QueueConsumer | null {
  const { services, providers, connection, concurrency } = context;
  if (!providers || !connection || !concurrency) return null;
  const { log } = services;
  return startConsumer({
    connection,
    queues: services.queues,
    concurrency,
    run: async (jobId, attempt, handOver, shutdown) => {
      try {
        const outcome = await measure(() => runJobAttempt(services, providers, jobId, { onDelivered: handOver, shutdown }));
        if (outcome === 'handed back') log.info({ jobId, attempt }, 'attempt handed back at shutdown');
      } catch (err) {
        log.warn({ err, jobId, attempt }, 'attempt failed; the reconciler will retry it');
      }
    },
    onError: (message, errContext) => log.warn(errContext, message),
  });
}

/**
 * The consumer of the webhook delivery queue. Receivers are kept apart: an attempt runs in a
 * lane of its webhook, and a lane holds at most PER_WEBHOOK_IN_FLIGHT attempts between their
 * claim and the receiver's answer (recording the answer happens outside the lane); the entries
 * of a webhook whose lane is full wait in the lane (in memory, without holding one of the
 * consumer's slots) until one of its attempts ends. A receiver that hangs for the whole 10 s
 * timeout thus delays only its own messages. Postgres holds every delivery, so entries waiting
 * in a lane when the process dies are queued again by the sweep (`webhook-sweep`) of another
 * worker.
 */
export function startWebhookDeliveries(context: TaskContext, measure: Measure): QueueConsumer | null {
  const { services } = context;
  const concurrency = context.webhookConcurrency ?? services.config.webhookConcurrency;
  if (concurrency <= 0) return null;
  const { log } = services;
  const lanes = new WebhookLanes(PER_WEBHOOK_IN_FLIGHT, async (deliveryId, sent) => {
    try {
      await measure(() => attemptDelivery(services, deliveryId, sent));
    } catch (err) {
      // The delivery stays pending (its lease lapses); the sweep queues it again.
      log.warn({ err, deliveryId }, 'webhook delivery attempt failed unexpectedly');
    }
  });
  const connection = createWorkerRedis({ url: context.redisUrl, clusterNodes: services.config.redisClusterNodes });
  connection.on('error', (err: Error) => log.debug({ err: err.message }, 'webhook consumer redis error'));
  const consumer = new Worker<DeliveryPayload>(
    QUEUES.webhookDeliveries,
    (entry) => lanes.run(entry.data.webhookId, entry.data.deliveryId),
    {
      connection,
      prefix: services.queues.prefix,
      concurrency,
      stalledInterval: 5_000,
      lockDuration: 30_000,
    },
  );
  consumer.on('error', (err) => log.warn({ err: err.message }, 'webhook consumer error'));
  return {
    async close() {
      await consumer.close();
      await lanes.idle();
      connection.disconnect();
    },
  };
}

/**
 * Per-webhook lanes of at most `limit` attempts each; what does not fit waits in its lane. An
 * attempt holds its place in the lane until it calls `sent` (the receiver is done with) or ends.
 */
export class WebhookLanes {
  private readonly lanes = new Map<string, { active: number; waiting: string[] }>();
  private readonly running = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly limit: number,
    private readonly attempt: (deliveryId: string, sent: () => void) => Promise<void>,
  ) {}

  /** Runs the attempt now when its lane has room (resolving when it ends), else leaves it waiting in the lane (resolving at once). */
  run(webhookId: string, deliveryId: string): Promise<void> {
    const lane = this.lanes.get(webhookId) ?? { active: 0, waiting: [] };
    this.lanes.set(webhookId, lane);
    if (lane.active >= this.limit) {
      if (!lane.waiting.includes(deliveryId)) lane.waiting.push(deliveryId);
      return Promise.resolve();
    }
    return this.start(webhookId, lane, deliveryId);
  }

  /** Attempts waiting or holding a place, per webhook with any. */
  load(): Map<string, { active: number; waiting: number }> {
    return new Map([...this.lanes].map(([id, lane]) => [id, { active: lane.active, waiting: lane.waiting.length }]));
  }

  /** Starts nothing more (what waits is left to the sweep) and resolves once the attempts running have ended. */
  async idle(): Promise<void> {
    this.stopped = true;
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  private start(webhookId: string, lane: { active: number; waiting: string[] }, deliveryId: string): Promise<void> {
    lane.active += 1;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      lane.active -= 1;
      const next = this.stopped ? undefined : lane.waiting.shift();
      if (next !== undefined) void this.start(webhookId, lane, next);
      else if (lane.active === 0) this.lanes.delete(webhookId);
    };
    const run = this.attempt(deliveryId, release).finally(() => {
      this.running.delete(run);
      release();
    });
    this.running.add(run);
    return run;
  }
}
