import { dispatchMonitors, type Services } from '@sdx/domain/scheduler';
import {
  DEFAULT_CLAIM_LIMIT,
  DEFAULT_DISPATCH_CONCURRENCY,
  RECOVER_EVERY_MS,
  RECOVERY_GRACE_MS,
  dispatchAllDue,
  recoverStalledRuns,
} from './dispatch';

export interface SchedulerOptions {
  /** Polling interval (SCHEDULER_TICK_MS). */
  tickMs: number;
  /** Schedules claimed per transaction. */
  claimLimit?: number;
  /** Runs dispatched at once. */
  concurrency?: number;
  catchUpMs?: number;
  /** Recovery leaves runs younger than this alone (RECOVERY_GRACE_MS). */
  recoveryGraceMs?: number;
  /** How often (wall-clock ms) the recovery step runs (RECOVER_EVERY_MS). */
  recoverEveryMs?: number;
}

export interface TickResult {
  claimed: number;
  runs: number;
  dropped: number;
  recovered: number;
  /** Monitor runs made for due monitors, and open monitor runs advanced (dispatchMonitors). */
  monitorRuns: number;
  monitorRunsAdvanced: number;
}

export interface RunningScheduler {
  /** One pass now: dispatches everything due (dispatchAllDue), then recovery when it is time. */
  tick(): Promise<TickResult>;
  /** Stops polling and waits for the pass in progress to finish. */
  stop(): Promise<void>;
}

/**
 * The scheduler loop: every tickMs, dispatch every due occurrence (claim rounds repeat while a
 * round comes back full) and the monitors' runs (dispatchMonitors), and every recoverEveryMs re-dispatch runs a dead process abandoned.
 * Any number of these may run against one database (see dispatch.ts). A failed pass is logged
 * and the next tick tries again.
 */
export function startScheduler(services: Services, options: SchedulerOptions): RunningScheduler {
  const claimLimit = options.claimLimit ?? DEFAULT_CLAIM_LIMIT;
  const recoverEveryMs = options.recoverEveryMs ?? RECOVER_EVERY_MS;
  let stopping = false;
  let lastRecovery = 0;
  let timer: NodeJS.Timeout | null = null;
  let wake: (() => void) | null = null;
  let current: Promise<TickResult> | null = null;

  const pass = async (): Promise<TickResult> => {
    const result: TickResult = { claimed: 0, runs: 0, dropped: 0, recovered: 0, monitorRuns: 0, monitorRunsAdvanced: 0 };
    const due = await dispatchAllDue(services, { limit: claimLimit, concurrency: options.concurrency, catchUpMs: options.catchUpMs });
    result.claimed = due.claimed;
    result.runs = due.runs.length;
    result.dropped = due.dropped;
    // Monitors: due ones get their runs, and open runs admit their next batches as the cap leaves room.
    const monitors = await dispatchMonitors(services);
    result.monitorRuns = monitors.claimed;
    result.monitorRunsAdvanced = monitors.advanced;
    if (!stopping && Date.now() - lastRecovery >= recoverEveryMs) {
      lastRecovery = Date.now();
      const recovered = await recoverStalledRuns(services, {
        graceMs: options.recoveryGraceMs ?? RECOVERY_GRACE_MS,
        concurrency: options.concurrency ?? DEFAULT_DISPATCH_CONCURRENCY,
      });
      result.recovered = recovered.length;
    }
    return result;
  };

  const tick = (): Promise<TickResult> => {
    // Passes never overlap within one process.
    if (!current) current = pass().finally(() => (current = null));
    return current;
  };

  const loop = async (): Promise<void> => {
    while (!stopping) {
      try {
        const result = await tick();
        if (result.runs > 0 || result.dropped > 0 || result.recovered > 0 || result.monitorRuns > 0) services.log.info(result, 'scheduler pass');
      } catch (error) {
        services.log.error({ err: error }, 'scheduler pass failed');
      }
      if (stopping) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, options.tickMs);
      });
      wake = null;
    }
  };
  const running = loop();

  return {
    tick,
    async stop() {
      stopping = true;
      if (timer) clearTimeout(timer);
      wake?.();
      await running;
    },
  };
}
