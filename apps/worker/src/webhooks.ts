import { Worker } from 'bullmq';
import { attemptDelivery, dispatchEvents, recoverDeliveries, type Services } from '@sdx/domain/worker';
import { createWorkerRedis, type DeliveryPayload, QUEUES } from '@sdx/queue';

/** The dispatcher looks at the outbox this often (and at once when this process wrote events). */
export const DISPATCH_INTERVAL_MS = 200;
/** The sweep re-queues deliveries whose entries were lost this often. */
export const SWEEP_INTERVAL_MS = 5_000;
/** Attempts to one webhook this process has in flight at once: a slow or dead receiver holds no more. */
export const PER_WEBHOOK_IN_FLIGHT = 32;

export interface WebhookRunnerOptions {
  services: Services;
  redisUrl: string;
  /** Deliveries sent at once (WEBHOOK_CONCURRENCY). */
  concurrency: number;
}

export interface RunningWebhooks {
  close(): Promise<void>;
}

/**
 * A worker's webhook side: the dispatcher (outbox → delivery queue), the consumer of the
 * delivery queue and the sweep.
 *
 * Receivers are kept apart: an attempt runs in a lane of its webhook, and a lane holds at most
 * PER_WEBHOOK_IN_FLIGHT attempts between their claim and the receiver's answer (recording the
 * answer happens outside the lane); the entries of a webhook whose lane is full wait in the lane
 * (in memory, without holding one of the consumer's `concurrency` slots) until one of its
 * attempts ends. A receiver that hangs for the whole 10 s timeout thus delays only its own
 * messages. Postgres holds every delivery, so entries waiting in a lane when the process dies
 * are queued again by the sweep of another worker.
 */
export function startWebhooks(options: WebhookRunnerOptions): RunningWebhooks {
  const { services } = options;
  const { log } = services;
  let closed = false;

  // Dispatcher: passes until the outbox is empty; one at a time, and one more when asked meanwhile.
  let dispatching: Promise<void> | null = null;
  let again = false;
  const dispatch = () => {
    if (closed) return;
    if (dispatching) {
      again = true;
      return;
    }
    dispatching = (async () => {
      do {
        again = false;
        while (!closed && (await dispatchEvents(services)) > 0);
      } while (again && !closed);
    })()
      .catch((err: Error) => log.warn({ err: err.message }, 'webhook dispatch failed; retrying shortly'))
      .finally(() => {
        dispatching = null;
      });
  };
  const stopListening = services.outbox.listen(dispatch);
  const dispatchTimer = setInterval(dispatch, DISPATCH_INTERVAL_MS);
  dispatchTimer.unref();
  dispatch();

  let sweeping: Promise<unknown> | null = null;
  const sweepTimer = setInterval(() => {
    if (sweeping || closed) return;
    sweeping = recoverDeliveries(services)
      .then((n) => n > 0 && log.info({ deliveries: n }, 're-queued webhook deliveries'))
      .catch((err: Error) => log.warn({ err: err.message }, 'webhook sweep failed'))
      .finally(() => {
        sweeping = null;
      });
  }, SWEEP_INTERVAL_MS);
  sweepTimer.unref();

  const lanes = new WebhookLanes(PER_WEBHOOK_IN_FLIGHT, async (deliveryId, sent) => {
    try {
      await attemptDelivery(services, deliveryId, sent);
    } catch (err) {
      // The delivery stays pending (its lease lapses); the sweep queues it again.
      log.warn({ err, deliveryId }, 'webhook delivery attempt failed unexpectedly');
    }
  });
  const connection = createWorkerRedis({ url: options.redisUrl, clusterNodes: services.config.redisClusterNodes });
  connection.on('error', (err) => log.debug({ err: err.message }, 'webhook consumer redis error'));
  const consumer = new Worker<DeliveryPayload>(QUEUES.webhookDeliveries, (entry) => lanes.run(entry.data.webhookId, entry.data.deliveryId), {
    connection,
    prefix: services.queues.prefix,
    concurrency: options.concurrency,
    stalledInterval: 5_000,
    lockDuration: 30_000,
  });
  consumer.on('error', (err) => log.warn({ err: err.message }, 'webhook consumer error'));

  return {
    async close() {
      closed = true;
      stopListening();
      clearInterval(dispatchTimer);
      clearInterval(sweepTimer);
      await consumer.close();
      await Promise.allSettled([dispatching, sweeping, lanes.idle()]);
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
