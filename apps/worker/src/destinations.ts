import { deliverToDestinations, type Services } from '@sdx/domain/worker';

/** The delivery poll looks for due deliveries to destinations this often. */
export const DESTINATION_POLL_MS = 500;

export interface RunningDestinations {
  close(): Promise<void>;
}

/**
 * A worker's deliveries to destinations (packages/domain/src/delivery/destination-delivery.ts): a pass
 * every DESTINATION_POLL_MS, and at once again while a pass found work. An idle pass costs a few
 * index probes of the deliveries' partial indexes. Several workers split the work (their claims
 * skip rows another holds); one that dies mid-attempt leaves a lease that lapses.
 */
export function startDestinations(services: Services): RunningDestinations {
  const { log } = services;
  let closed = false;
  let running: Promise<void> | null = null;
  const pass = () => {
    if (running || closed) return;
    running = (async () => {
      while (!closed && (await deliverToDestinations(services)) > 0);
    })()
      .catch((err: Error) => log.warn({ err: err.message }, 'delivery to destinations failed; retrying shortly'))
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(pass, DESTINATION_POLL_MS);
  timer.unref();
  pass();
  return {
    async close() {
      closed = true;
      clearInterval(timer);
      await running;
    },
  };
}
