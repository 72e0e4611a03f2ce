import { setInterval } from 'node:timers/promises';
import { endGracePeriods, type Resources } from '@sdx/domain/scheduler';

export interface RunningPlanGrace {
  /** Resolves once a pass under way has finished; no pass starts after it is called. */
  stop(): Promise<void>;
}

/**
 * Ends the grace periods of failed subscription invoices (packages/domain/src/billing/grace.ts):
 * once at start and then every `intervalMs`, as of the services' clock. The state is in
 * Postgres, so a restarted scheduler (or another replica) finds what is due; a failed pass is
 * logged and the next one runs on time.
 */
export function startPlanGrace(services: Pick<Resources, 'db' | 'config' | 'clock' | 'log' | 'outbox'>, options: { intervalMs: number }): RunningPlanGrace {
  const stopping = new AbortController();
  const pass = async (): Promise<void> => {
    try {
      await endGracePeriods(services);
    } catch (error) {
      services.log.error({ err: error }, 'plan grace pass failed');
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
