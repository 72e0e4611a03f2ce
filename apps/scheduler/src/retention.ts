import { setInterval } from 'node:timers/promises';
import type { Logger } from '@sdx/config';
import type { Db } from '@sdx/db';
import { type Clock, type ResultObjects, type RetentionPolicy, runRetention, sweepOrphanedObjects, type SweepState } from '@sdx/domain/scheduler';

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
 * replicas may purge at once: each skips the rows another has locked. With a result bucket, each
 * pass also sweeps it for objects no page names (sweepOrphanedObjects), going on where the last
 * pass stopped.
 */
export function startRetention(services: { db: Db; clock: Clock; log: Logger; resultObjects?: ResultObjects }, options: RetentionOptions): RunningRetention {
  const stopping = new AbortController();
  const sweep: SweepState = { after: null };
  const pass = async (): Promise<void> => {
    try {
      const done = await runRetention(services, services.clock.now(), options);
      if (Object.values(done).some((n) => n > 0)) services.log.info(done, 'retention purge');
    } catch (error) {
      services.log.error({ err: error }, 'retention purge failed');
    }
    if (!services.resultObjects) return;
    try {
      await sweepOrphanedObjects(services, sweep);
    } catch (error) {
      services.log.warn({ err: error }, 'result object sweep failed');
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
