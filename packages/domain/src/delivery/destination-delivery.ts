import { PassThrough } from 'node:stream';
import { sql } from 'kysely';
import { exportContentType } from '@sdx/exports';
import { retryDelayMs } from '@sdx/webhooks';
import type { Resources, Tenant } from '../resources';
import { ApiError } from '../errors';
import { recordEvents } from '../webhooks/events';
import { findWorkspace } from '../workspaces/workspaces';
import { openBucket, targetOf } from '../destinations/bucket';
import { writeBatchExport, writeJobExport } from './export-body';

/**
 * Delivery of exports to destinations (extensions-2.md 5), polled by every worker
 * (apps/worker/src/destinations.ts). A job or batch submitted with a destination carries its
 * delivery from admission: status pending, its object key, due at once. Nothing in the job's own
 * transitions knows of it: a pass finds, through partial indexes that hold only pending
 * deliveries (of jobs, only once they ended), the deliveries whose subject ended and that are
 * due, and:
 * - settles those with nothing to deliver (a job that failed or was cancelled, a batch with no
 *   completed child): failed, no attempt, no event (job.failed and its kin told the end);
 * - claims the others for one attempt each (attempts + 1, a lease; rows another worker holds
 *   are skipped), writes the export to `{prefix}{id}.{ext}` (a streamed multipart upload), and
 *   records the outcome fenced by the attempt number: succeeded (`*.delivered`), pending again
 *   at the next time of the webhook retry schedule (WEBHOOK_RETRY_SCHEDULE), or failed once it
 *   is spent (`*.delivery_failed`), the event in the same transaction (the webhook outbox).
 * A worker that dies during an attempt leaves the lease to lapse; the next pass attempts again.
 * No credits move.
 */

export type DestinationDeliverySubject = 'job' | 'batch';

/** An attempt holds its delivery this long; past it, another worker may attempt again. */
export const DESTINATION_LEASE_MS = 15 * 60 * 1000;

/** A delivery claimed for one attempt. */
export interface ClaimedDestinationDelivery {
  subject: DestinationDeliverySubject;
  id: string;
  workspace_id: string;
  destination_id: string;
  delivery_key: string;
  delivery_attempts: number;
}

const TABLES = { job: 'jobs', batch: 'batches' } as const;

/** Jobs that failed or were cancelled, and ended batches without a completed child: failed, with nothing to deliver. */
async function settleUndeliverable(services: Resources, limit: number): Promise<number> {
  const jobs = await sql`
    update jobs j
    set delivery_status = 'failed', delivery_next_attempt_at = null,
        delivery_error = case when j.status = 'failed' then 'The job failed: it has no export to deliver.' else 'The job was cancelled: it has no export to deliver.' end
    where j.id in (
      select id from jobs
      where delivery_status = 'pending' and status in ('failed', 'cancelled') and delivery_next_attempt_at <= now()
      limit ${limit} for update skip locked
    )`.execute(services.db);
  const batches = await sql`
    update batches b
    set delivery_status = 'failed', delivery_next_attempt_at = null, delivery_error = 'No job of the batch completed: it has no export to deliver.'
    where b.id in (
      select p.id from batches p
      where p.delivery_status = 'pending' and p.delivery_next_attempt_at <= now()
        and not exists (select 1 from jobs c where c.batch_id = p.id and c.status in ('queued', 'running', 'completed'))
      limit ${limit} for update skip locked
    )`.execute(services.db);
  return Number(jobs.numAffectedRows ?? 0) + Number(batches.numAffectedRows ?? 0);
}

/** Claims due deliveries of completed jobs and ended batches, each for one attempt under a lease. */
export async function claimDueDeliveries(services: Resources, limit: number): Promise<ClaimedDestinationDelivery[]> {
  const lease = sql`now() + make_interval(secs => ${DESTINATION_LEASE_MS / 1000})`;
  const [jobs, batches] = await Promise.all([
    sql<Omit<ClaimedDestinationDelivery, 'subject'>>`
      update jobs j set delivery_attempts = j.delivery_attempts + 1, delivery_lease_until = ${lease}
      where j.id in (
        select id from jobs
        where delivery_status = 'pending' and status = 'completed' and delivery_next_attempt_at <= now()
          and (delivery_lease_until is null or delivery_lease_until < now())
        order by delivery_next_attempt_at limit ${limit} for update skip locked
      )
      returning j.id, j.workspace_id, j.destination_id, j.delivery_key, j.delivery_attempts`.execute(services.db),
    sql<Omit<ClaimedDestinationDelivery, 'subject'>>`
      update batches b set delivery_attempts = b.delivery_attempts + 1, delivery_lease_until = ${lease}
      where b.id in (
        select p.id from batches p
        where p.delivery_status = 'pending' and p.delivery_next_attempt_at <= now()
          and (p.delivery_lease_until is null or p.delivery_lease_until < now())
          and not exists (select 1 from jobs c where c.batch_id = p.id and c.status in ('queued', 'running'))
          and exists (select 1 from jobs c where c.batch_id = p.id and c.status = 'completed')
        order by p.delivery_next_attempt_at limit ${limit} for update skip locked
      )
      returning b.id, b.workspace_id, b.destination_id, b.delivery_key, b.delivery_attempts`.execute(services.db),
  ]);
  return [
    ...jobs.rows.map((row) => ({ ...row, subject: 'job' as const })),
    ...batches.rows.map((row) => ({ ...row, subject: 'batch' as const })),
  ];
}

export type DestinationDeliveryOutcome = 'succeeded' | 'retrying' | 'failed' | 'skipped';

/** How an attempt ended: null on success, else the error and whether another attempt may help. */
interface AttemptResult {
  error: string | null;
  final: boolean;
}

/** Writes the export of a claimed delivery to its destination's bucket. */
async function attempt(services: Resources, claimed: ClaimedDestinationDelivery): Promise<AttemptResult> {
  const destination = await services.db
    .selectFrom('destinations')
    .selectAll()
    .where('id', '=', claimed.destination_id)
    .where('workspace_id', '=', claimed.workspace_id)
    .executeTakeFirst();
  if (!destination) return { error: 'The destination was deleted.', final: true };
  const workspace = await findWorkspace(services.db, claimed.workspace_id);
  if (!workspace) return { error: 'The workspace was deleted.', final: true };
  const tenant: Tenant = { workspace, keyId: null, role: null };
  try {
    const store = await openBucket(services, targetOf(services.config, destination));
    try {
      const body = new PassThrough();
      const write = claimed.subject === 'job' ? writeJobExport : writeBatchExport;
      const writing = write(services, tenant, claimed.id, destination.format, body).catch((error: unknown) => {
        body.destroy(error as Error);
        throw error;
      });
      await Promise.all([writing, store.upload(claimed.delivery_key, body, exportContentType(destination.format))]);
    } finally {
      store.close();
    }
    return { error: null, final: false };
  } catch (error) {
    // A result deleted by retention will not come back: no attempt after it can succeed.
    const final = error instanceof ApiError && error.code === 'results_expired';
    return { error: (error as Error).message || String(error), final };
  }
}

/** Records an attempt's outcome while the attempt is still the delivery's latest (fenced by its number); its event with it. */
async function record(
  services: Resources,
  claimed: ClaimedDestinationDelivery,
  result: AttemptResult,
): Promise<DestinationDeliveryOutcome> {
  const delayMs =
    result.error === null || result.final ? null : retryDelayMs(services.config.webhookRetrySchedule, claimed.delivery_attempts);
  const status = result.error === null ? 'succeeded' : delayMs === null ? 'failed' : 'pending';
  const now = services.clock.now();
  const written = await services.db.transaction().execute(async (tx) => {
    const updated = await tx
      .updateTable(TABLES[claimed.subject])
      .set({
        delivery_status: status,
        delivery_error: result.error,
        delivered_at: status === 'succeeded' ? now : null,
        delivery_next_attempt_at: status === 'pending' ? new Date(now.getTime() + delayMs!) : null,
        delivery_lease_until: null,
      })
      .where('id', '=', claimed.id)
      .where('delivery_status', '=', 'pending')
      .where('delivery_attempts', '=', claimed.delivery_attempts)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) return null;
    if (status === 'pending') return 0;
    const type = `${claimed.subject}.${status === 'succeeded' ? 'delivered' : 'delivery_failed'}` as const;
    return recordEvents(tx, now, [{ workspaceId: claimed.workspace_id, type, subjectId: claimed.id }]);
  });
  if (written === null) return 'skipped';
  if (written > 0) services.outbox.written();
  return status === 'pending' ? 'retrying' : status;
}

/** One attempt of a claimed delivery, recorded. */
export async function attemptDestinationDelivery(
  services: Resources,
  claimed: ClaimedDestinationDelivery,
): Promise<DestinationDeliveryOutcome> {
  const result = await attempt(services, claimed);
  if (result.error !== null)
    services.log.warn(
      { subject: claimed.id, destination: claimed.destination_id, attempt: claimed.delivery_attempts, err: result.error },
      'delivery to a destination failed',
    );
  return record(services, claimed, result);
}

/**
 * One pass: settles what has nothing to deliver, then claims up to `limit` due deliveries and
 * attempts them together. Returns how many deliveries it settled or attempted.
 */
export async function deliverToDestinations(services: Resources, limit = 8): Promise<number> {
  const settled = await settleUndeliverable(services, 100);
  const claimed = await claimDueDeliveries(services, limit);
  await Promise.all(claimed.map((c) => attemptDestinationDelivery(services, c)));
  return settled + claimed.length;
}
