import { setInterval } from 'node:timers/promises';
import type { Logger } from '@sdx/config';
import type { Db } from '@sdx/db';
import { type Clock, purgeExpiredIdempotencyKeys } from '@sdx/domain';

export interface IdempotencyPurgeOptions {
  intervalMs: number;
  /** Records deleted per statement (IDEMPOTENCY_PURGE_BATCH when absent). */
  batchSize?: number;
}

export interface RunningPurge {
  /** Resolves once a pass under way has finished; no pass starts after it is called. */
  stop(): Promise<void>;
}

/**
 * Deletes expired idempotency records (kept 24 hours, decisions.md) once at start and then every
 * `intervalMs`, in short batched statements. A failed pass is logged and the next one runs on
 * time. Several scheduler replicas may purge at once: each skips the rows another has locked.
 */
export function startIdempotencyPurge(
  services: { db: Db; clock: Clock; log: Logger },
  options: IdempotencyPurgeOptions,
): RunningPurge {
  const stopping = new AbortController();
  const pass = async (): Promise<void> => {
    try {
      const deleted = await purgeExpiredIdempotencyKeys(services.db, services.clock.now(), options.batchSize);
      if (deleted > 0) services.log.info({ deleted }, 'expired idempotency keys purged');
    } catch (error) {
      services.log.error({ err: error }, 'idempotency key purge failed');
    }
  };
  const running = (async () => {
    await pass();
    try {
      for await (const _ of setInterval(options.intervalMs, undefined, { signal: stopping.signal })) await pass();
    } catch (error) {
      if (!stopping.signal.aborted) throw error;
    }
  })();
  return {
    async stop() {
      stopping.abort();
      await running;
    },
  };
}
