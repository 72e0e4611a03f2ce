import { setInterval } from 'node:timers/promises';
import type { Logger } from '@sdx/config';
import type { Db } from '@sdx/db';
import { type Clock, type RetentionPolicy, runRetention } from '@sdx/domain';

export interface RetentionOptions extends RetentionPolicy {
  intervalMs: number;
}

export interface RunningRetention {
  /** Resolves once a pass under way has finished; no pass starts after it is called. */
  stop(): Promise<void>;
}

/**
 * Runs the retention purge (packages/domain/src/retention/retention.ts: expired results,
 * idempotency records, ended sessions) once at start and then every `intervalMs`, as of the
 * services' clock. A failed pass is logged and the next one runs on time. Several scheduler
 * replicas may purge at once: each skips the rows another has locked.
 */
export function startRetention(services: { db: Db; clock: Clock; log: Logger }, options: RetentionOptions): RunningRetention {
  const stopping = new AbortController();
  const pass = async (): Promise<void> => {
    try {
      const done = await runRetention(services.db, services.clock.now(), options);
      if (Object.values(done).some((n) => n > 0)) services.log.info(done, 'retention purge');
    } catch (error) {
      services.log.error({ err: error }, 'retention purge failed');
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
