import { sql } from 'kysely';
import type { Services } from '../context';
import { announce } from './announce';
import { ENQUEUE_FAILED, enqueueAfterCommit, nextAttempt } from './enqueue';
import { requeueAbandoned } from './requeue';
import { failJob } from './state';

export interface ReconcileReport {
  requeued: number;
  failed: number;
  enqueued: number;
  /** The jobs whose entries this pass added, in the order taken. */
  enqueuedIds: string[];
}

/** Queued jobs one reconciler statement claims, by default. */
export const RECONCILE_BATCH_SIZE = 500;

export interface ReconcileOptions {
  /** Rows claimed per statement (RECONCILE_BATCH_SIZE by default). */
  batchSize?: number;
  /** A job admitted or due less than this ago is left to the add in progress. */
  enqueueGraceMs?: number;
  /** Batches one pass takes at most (so one pass ends even under a flood of admissions). */
  maxBatches?: number;
}

/**
 * Keeps Postgres and the queue from diverging for good, for the jobs of this process's
 * deployment only (jobs.deployment; rows admitted before deployments were recorded are
 * adopted by the first reconciler that takes them):
 * - a running job whose heartbeat stopped (its worker died) goes back to queued for its next
 *   attempt, or fails with retries_exhausted (reservation released) when none is left;
 * - a queued job whose entry may be gone has it added again. Its entry may be gone when its
 *   mark (jobs.enqueued_at) is older than the Redis dataset (the data epoch: Redis restarted
 *   empty), when the add failed (the epoch mark), or, as a safety net, when the mark is older
 *   than RECONCILE_RECHECK_MS. Each goes in an entry of its own, at its priority (an entry that
 *   still waits may then wake the job twice; the claim skips the second).
 * The queued jobs are taken in batches by one statement each that claims the rows (FOR UPDATE
 * SKIP LOCKED) and moves their mark on, so the reconcilers of every worker split a backlog
 * between them and no two take the same job; a pass goes on until no batch is left.
 */
export async function reconcileJobs(services: Services, options: ReconcileOptions = {}): Promise<ReconcileReport> {
  const { db, config } = services;
  const batchSize = options.batchSize ?? RECONCILE_BATCH_SIZE;
  const maxBatches = options.maxBatches ?? 200;
  const grace = options.enqueueGraceMs ?? Math.max(2000, config.heartbeatIntervalMs * 2);
  const report: ReconcileReport = { requeued: 0, failed: 0, enqueued: 0, enqueuedIds: [] };
  const deployment = config.deploymentId;
  const now = services.clock.now();
  const staleBefore = new Date(now.getTime() - config.heartbeatTimeoutMs);

  const stale = await db
    .selectFrom('jobs')
    .select(['id', 'attempts', 'max_attempts'])
    .where('status', '=', 'running')
    .where('heartbeat_at', '<', staleBefore)
    .where((eb) => eb.or([eb('deployment', '=', deployment), eb('deployment', 'is', null)]))
    .limit(batchSize)
    .execute();
  for (const job of stale.filter((j) => j.attempts >= j.max_attempts)) {
    const failed = await failJob(services, job.id, null, {
      code: 'retries_exhausted',
      message: `The worker running attempt ${job.attempts} stopped responding and no attempts are left.`,
      retryable: false,
    });
    if (failed) report.failed += 1;
  }
  const requeued = await requeueAbandoned(
    db,
    stale.filter((j) => j.attempts < j.max_attempts).map((j) => j.id),
    staleBefore,
  );
  report.requeued = requeued.length;
  announce(services, requeued);
  await enqueueAfterCommit(services, requeued.map(nextAttempt));

  // Entries added before Redis's current dataset began may be gone with it.
  const epoch = await services.queues.dataEpoch(deployment, now);
  const markedBefore = new Date(Math.max(epoch.getTime(), now.getTime() - config.reconcileRecheckMs));
  const dueBefore = new Date(now.getTime() - grace);
  for (const own of [true, false]) {
    for (let batch = 0; batch < maxBatches; batch++) {
      const taken = await takeQueued(services, { own, now, markedBefore, dueBefore, limit: batchSize });
      if (taken.length === 0) break;
      // Each job in an entry of its own: the jobs of one shared entry may be split between
      // batches and reconcilers, and a second add under the shared ID would add nothing.
      const added = await enqueueAfterCommit(services, taken.map(nextAttempt));
      if (!added) return report;
      report.enqueued += taken.length;
      for (const job of taken) report.enqueuedIds.push(job.id);
      if (taken.length < batchSize) break;
    }
  }
  return report;
}

interface TakeQueued {
  /** This deployment's jobs; false: jobs of no recorded deployment, adopted. */
  own: boolean;
  now: Date;
  markedBefore: Date;
  dueBefore: Date;
  limit: number;
}

/**
 * Claims up to `limit` due queued jobs whose mark is older than `markedBefore`, oldest mark
 * first, skipping rows another reconciler holds, and marks them now (and as this deployment's).
 * One statement: the row locks last only while it runs, and the new mark keeps every other
 * reconciler off them afterwards.
 */
async function takeQueued(services: Services, take: TakeQueued) {
  const deployment = services.config.deploymentId;
  const scope = take.own ? sql`l.deployment = ${deployment}` : sql`l.deployment is null`;
  const { rows } = await sql<{ id: string; attempts: number; batch_id: string | null; queue_priority: number }>`
    update jobs j
    -- marked at the moment of the claim, not when the pass began: a pass that began before Redis
    -- lost its data must not leave marks older than that loss, which another reconciler would
    -- take again
    set enqueued_at = greatest(${take.now}, clock_timestamp()), deployment = ${deployment}
    from (
      select l.id from jobs l
      where l.status = 'queued' and ${scope}
        and l.enqueued_at < ${take.markedBefore}
        and (
          (l.next_attempt_at is null and l.created_at < ${take.dueBefore}) or l.next_attempt_at < ${take.dueBefore}
          -- an add that failed: no add is in progress, so no grace
          or (l.enqueued_at <= ${ENQUEUE_FAILED} and coalesce(l.next_attempt_at, l.created_at) <= ${take.now})
        )
      order by l.enqueued_at
      limit ${take.limit}
      for update skip locked
    ) c
    where j.id = c.id and j.status = 'queued'
    returning j.id, j.attempts, j.batch_id, j.queue_priority
  `.execute(services.db);
  return rows;
}
