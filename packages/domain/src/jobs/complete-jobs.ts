import { sql } from 'kysely';
import { findOperation, type Platform } from '@sdx/catalog';
import { type JobRow, jsonRows, thenCommit, together, type Tx } from '@sdx/db';
import type { Item } from '@sdx/providers';
import type { Services } from '../context';
import { balanceLock } from '../credits/credits';
import { type ClaimedReservation, claimHeldReservations, type Settlement, settleClaimed } from '../credits/settle-many';
import { type FlushResult, GroupCommit, perProcess, refusedData } from '../group-commit';
import { deliveredCost } from './recipe';

/** What an attempt delivered, counted by kind: for a bundle, the profile is primary and the rest bundled. */
export interface Delivered {
  total: number;
  primary: number;
  bundled: number;
  /** The last page, not yet saved: it is written with the completion. */
  finalPage: { pageNo: number; items: Item[] } | null;
}

/** An attempt that delivered its results and asks to complete the job it claimed with `lease`. */
export interface Completion {
  job: JobRow;
  lease: string;
  delivered: Delivered;
}

const groups = new WeakMap<Services, GroupCommit<Completion, boolean>>();

/**
 * Completes a job and settles its reservation. Concurrent completions of one process share one
 * transaction (see GroupCommit), so a worker running many attempts pays one commit and one lock
 * of each workspace's balance row per group instead of per job. True when the attempt still
 * owned the job; false when it did not (cancelled, or taken over by another attempt): then
 * nothing is written and nothing is billed.
 */
export async function completeJob(services: Services, completion: Completion): Promise<boolean> {
  const group = perProcess(groups, services, () => new GroupCommit((items: Completion[]) => completeJobs(services, items), { maxBatch: 64 }));
  return group.submit(completion);
}

/**
 * The completion of one group. When Postgres refuses its data (refusedData), each of its jobs
 * is tried again alone, so a job whose write Postgres refuses (a result it cannot store) fails
 * only its own attempt, as it would have without grouping. Any other failure (database
 * unreachable) is every attempt's answer at once: they are retried as failed attempts are.
 */
export async function completeJobs(services: Services, items: readonly Completion[]): Promise<FlushResult<boolean>> {
  try {
    return await completeTogether(services, items);
  } catch (error) {
    if (items.length === 1 || !refusedData(error)) throw error;
    services.log.warn({ err: error, jobs: items.length }, 'group completion failed; completing its jobs one by one');
    const results: FlushResult<boolean> = [];
    for (const item of items) {
      try {
        results.push(...(await completeTogether(services, [item])));
      } catch (err) {
        results.push(err instanceof Error ? err : new Error(String(err)));
      }
    }
    return results;
  }
}

/**
 * One transaction for the given completions, retried when Postgres picks it as a deadlock
 * victim: a batch cancellation locks its children and their workspace's balance one child at a
 * time, so it can hold a balance that a group needs while it waits for a job row the group
 * holds.
 */
async function completeTogether(services: Services, items: readonly Completion[]): Promise<FlushResult<boolean>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await services.db.transaction().execute((tx) => completeInTransaction(tx, services.clock.now(), items));
    } catch (error) {
      if ((error as { code?: string }).code !== '40P01' || attempt >= 3) throw error;
      services.log.warn({ jobs: items.length, attempt }, 'job completion chosen as deadlock victim; retrying');
    }
  }
}

/**
 * One transaction for the whole group, in three statements whatever its size:
 * 1. the jobs completed, each only if its attempt still holds the lease on a running job (job
 *    rows locked in id order first, so the groups of several worker processes cannot
 *    deadlock); with it, the final result pages of those jobs and the claim of their held
 *    reservations (claimHeldReservations). The lease and status are tested on the locked rows
 *    (the CTE `locked`, re-read after any lock wait), never in a WHERE clause on jobs, which
 *    would let the planner scan the partial index of running jobs instead of the primary key;
 *    see claimJobs;
 * 2. the balance rows of the group's workspaces locked in workspace order, sent in the same
 *    message as 1 (together), so both cost one round trip;
 * 3. the settlement of what was claimed (settleClaimed: ledger entries and balances, with the
 *    COMMIT);
 * plus, rarely, billed_credits corrected where the charge was capped at the reservation.
 * Locks are taken jobs, then reservations, then balances: the order of every other writer of
 * them (cancellation, failure, reconciler).
 */
async function completeInTransaction(tx: Tx, now: Date, items: readonly Completion[]): Promise<FlushResult<boolean>> {
  const credits = items.map(({ job, delivered }) => {
    const spec = findOperation(job.platform, job.operation)!;
    return deliveredCost({ platform: job.platform as Platform, spec, includePosts: job.include_posts }, delivered.primary, delivered.bundled);
  });
  const values = items.map(({ job, lease, delivered }, idx) => ({
    idx,
    id: job.id,
    lease,
    message: delivered.total === 0 ? 'Completed with no results' : `Completed with ${delivered.total} results`,
    total: delivered.total,
    credits: credits[idx]!,
  }));
  const ids = [...new Set(items.map((c) => c.job.id))];
  // Pages of every item are sent; only those of jobs completed here are written.
  const pages = items.flatMap(({ job, lease, delivered: { finalPage } }) =>
    finalPage ? [{ job_id: job.id, lease, page_no: finalPage.pageNo, item_count: finalPage.items.length, items: finalPage.items }] : [],
  );
  const writePages =
    pages.length === 0
      ? sql``
      : sql`, pages as (
          insert into job_result_pages (job_id, page_no, item_count, items)
          select p.job_id, p.page_no, p.item_count, p.items
          from ${jsonRows(pages, 'job_id text, lease text, page_no int, item_count int, items jsonb')} as p
          join done d on d.id = p.job_id and d.lease = p.lease
          on conflict (job_id, page_no) do update set item_count = excluded.item_count, items = excluded.items
        )`;
  const completion = sql<ClaimedReservation & { idx: number; reservation_id: string | null }>`
    with locked as materialized (
      select l.id, l.status, l.lease_token from jobs l where l.id in (${sql.join(ids)}) order by l.id for update
    ), done as (
      update jobs j
      set status = 'completed',
          progress_stage = 'completed',
          progress_message = v.message,
          progress_current = v.total,
          progress_total = v.total,
          result_count = v.total,
          billed_units = v.total,
          billed_credits = v.credits,
          finished_at = ${now},
          lease_token = null,
          checkpoint_cursor = null
      from ${jsonRows(values, 'idx int, id text, lease text, message text, total int, credits int')} as v, locked k
      where k.id = v.id
        and k.lease_token = v.lease
        and k.status = 'running'
        and j.id = k.id
      returning v.idx, j.id, v.lease, v.credits
    )${writePages},
    settled as (${claimHeldReservations(now, sql`(select d.id as job_id, d.credits as charge from done d) as v`)})
    select d.idx, s.id as reservation_id, s.workspace_id, s.job_id, s.plan_amount, s.promo_amount, s.purchased_amount, s.units,
           s.settled_credits, s.monthly_quota
    from done d left join settled s on s.job_id = d.id
    order by d.idx
  `;
  // The balance rows of the group's workspaces are locked by a second statement in the same
  // message: after the jobs and reservations (the lock order of every writer), one round trip.
  const [rows, lockedRows] = await together(tx, completion.compile(tx), balanceLock(tx, items.map(({ job }) => ({ id: job.workspace_id }))).compile());
  const results: boolean[] = items.map(() => false);
  const settlements: Settlement[] = [];
  for (const row of rows) {
    results[row.idx] = true;
    if (row.reservation_id !== null) {
      settlements.push({ reservation: { ...row, id: row.reservation_id }, units: items[row.idx]!.delivered.total });
    }
  }
  if (settlements.length === 0) return results;

  // A charge capped at its reservation (settled_credits, from the claim) also corrects the
  // job's billed_credits, in a statement of its own; otherwise the settlement is the last one.
  const capped = rows.filter((row) => row.reservation_id !== null && (row.settled_credits ?? 0) !== credits[row.idx]);
  await settleClaimed(tx, now, settlements, { last: capped.length === 0, lockedRows });
  if (capped.length > 0) {
    const corrections = capped.map((row) => ({ id: items[row.idx]!.job.id, credits: row.settled_credits ?? 0 }));
    await sql`
      update jobs j set billed_credits = v.credits
      from ${jsonRows(corrections, 'id text, credits int')} as v
      where j.id = v.id
      ${thenCommit}
    `.execute(tx);
  }
  return results;
}
