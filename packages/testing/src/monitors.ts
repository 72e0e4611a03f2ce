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
  return eventually(async () => {
    await passMonitors(stack);
    const row = await stack.runtime.db.selectFrom('monitor_runs').select('status').where('id', '=', runId).executeTakeFirst();
    return row && !['queued', 'running'].includes(row.status) ? row.status : null;
  }, timeoutMs, 200);
}
