import { dispatchMonitors } from '@sdx/domain/testing';
import { eventually, type TestStack } from './stack';

/**
 * The scheduler's pass over monitors, for a test stack (which runs no scheduler): due monitors
 * get their runs, and open runs are advanced (batches entered, completion recorded).
 */
export async function passMonitors(stack: TestStack): Promise<void> {
  await dispatchMonitors(stack.runtime.services);
}

/** Passes over monitors until the run has ended (its batches done and its observations kept); its final status. */
export async function untilMonitorRunEnds(stack: TestStack, runId: string, timeoutMs = 60_000): Promise<string> {
  return eventually(
    async () => {
      await passMonitors(stack);
      const row = await stack.runtime.db.selectFrom('monitor_runs').select('status').where('id', '=', runId).executeTakeFirst();
      return row && !['queued', 'running'].includes(row.status) ? row.status : null;
    },
    timeoutMs,
    200,
  );
}

/**
 * Waits until the clock has passed its next whole second (half a second on average, instead of
 * a fixed 1.1 s): a `sandbox_drift_N` target read after this shows counts grown since any read
 * that ended before the call, since the drift counts whole seconds of Date.now().
 */
export async function untilNextSecond(): Promise<void> {
  const second = Math.floor(Date.now() / 1000);
  while (Math.floor(Date.now() / 1000) <= second) {
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 2));
  }
}
