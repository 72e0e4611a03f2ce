import type { BatchRow, JobRow, Tx } from '@sdx/db';
import type { Services, Tenant } from '../context';
import { ApiError } from '../errors';
import { announceEnded } from '../jobs/announce';
import { cancelJobs } from '../jobs/state';

/**
 * POST /v1/batches/{batch_id}/cancel. In one transaction, with the batch row locked so two
 * cancels serialise: records cancel_requested_at (once) and cancels every child still queued or
 * running exactly as a job cancel does (status cancelled, reservation released; a running
 * attempt notices and discards its output). A batch whose children are all terminal already is
 * returned unchanged, as a finished job is. Repeating the call changes nothing.
 */
export async function cancelBatch(services: Services, tenant: Tenant, batchId: string): Promise<BatchRow> {
  const { batch, cancelled } = await services.db.transaction().execute(async (tx) => cancelInTransaction(services, tx, tenant, batchId));
  announceEnded(services, cancelled, 'cancelled', cancelled.length > 0);
  return batch;
}

async function cancelInTransaction(
  services: Services,
  tx: Tx,
  tenant: Tenant,
  batchId: string,
): Promise<{ batch: BatchRow; cancelled: JobRow[] }> {
  const batch = await tx
    .selectFrom('batches')
    .selectAll()
    .where('id', '=', batchId)
    .where('workspace_id', '=', tenant.workspace.id)
    .forUpdate()
    .executeTakeFirst();
  if (!batch) throw new ApiError('batch_not_found', `No batch ${batchId} in this workspace.`, { batch_id: batchId });
  const active = await tx
    .selectFrom('jobs')
    .select('id')
    .where('workspace_id', '=', tenant.workspace.id)
    .where('batch_id', '=', batch.id)
    .where('status', 'in', ['queued', 'running'])
    .orderBy('batch_position')
    .execute();
  if (active.length === 0) return { batch, cancelled: [] };
  const now = services.clock.now();
  const cancelled = await cancelJobs(
    tx,
    now,
    active.map((child) => child.id),
    'Cancelled with its batch',
  );
  if (batch.cancel_requested_at !== null) return { batch, cancelled };
  const marked = await tx
    .updateTable('batches')
    .set({ cancel_requested_at: now })
    .where('id', '=', batch.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { batch: marked, cancelled };
}
