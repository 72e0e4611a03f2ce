import { sql } from 'kysely';
import type { AppConfig } from '@sdx/config';
import { type JobRow, jsonbTexts, jsonRows, sendTogether, type Tx } from '@sdx/db';
import type { Item } from '@sdx/providers';
import { balanceLock } from '../credits/balances';
import { bookSettlements, type ClaimedReservation, type Settlement } from '../credits/postings';
import { afterSettlements } from '../billing/triggers';
import { claimHeldReservations } from '../credits/reservations';
import { type FlushResult, GroupCommit, refusedData } from '../group-commit';
import { newId } from '../ids';
import type { Resources } from '../resources';
import { retryDeadlocks } from '../tx';
import { BATCH_CHILD_ENDED, insertEvents } from '../webhooks/events';
import { announceEnded } from './announce';
import { keepOnlyNew } from './new-only';
import { deleteObjectsQuietly } from './result-pages';
import { bucketOf } from './result-objects';
import { chargeOf } from './recipe';

/**
 * The completion of jobs, the job-state transition that bills (state.ts has the others):
 * running → completed, the job's last page written and its reservation settled at its charge,
 * in the job's own transaction. Attempts complete through `GroupJobCompletions` (at the end).
 */

/** What an attempt delivered, counted by kind: for a bundle, the profile is primary and the rest bundled. */
export interface Delivered {
  total: number;
  primary: number;
  bundled: number;
  /**
   * The last page, not yet saved: it is written with the completion. With RESULT_STORE=s3 it is
   * written to the bucket first (`object`: the object and its part of it, for its row).
   */
  finalPage: { pageNo: number; items: Item[]; object?: { key: string; offset: number | null; bytes: number } | null } | null;
}

/** An attempt that delivered its results and asks to complete the job it claimed with `lease`. */
export interface Completion {
  job: JobRow;
  lease: string;
  delivered: Delivered;
}

/**
 * Completes jobs and settles their reservations. Each is completed only if its attempt still
 * holds the lease on a running job; true for those, false for the others (cancelled, or taken
 * over by another attempt): then nothing is written and nothing is billed. Each job is charged
 * its price at the rates recorded on it (chargeOf). The jobs share one transaction; a new_only
 * schedule's job has one of its own, where it keeps only what is new (new-only.ts).
 */
export async function completeJobs(services: Resources, completions: readonly Completion[]): Promise<FlushResult<boolean>> {
  const items = await withFinalObjects(services, completions);
  const results: FlushResult<boolean> = new Array<boolean | Error>(items.length);
  const regular = items.flatMap((c, i) => (c.job.new_only ? [] : [i]));
  if (regular.length > 0) {
    const answers = await completeGroup(
      services,
      regular.map((i) => items[i]),
    );
    regular.forEach((i, k) => (results[i] = answers[k]!));
  }
  for (const [i, c] of items.entries()) {
    if (c.job.new_only)
      results[i] = await completeNewOnly(services, c).catch((error: unknown) =>
        error instanceof Error ? error : new Error(String(error)),
      );
  }
  return results;
}

/**
 * With RESULT_STORE=s3, the last pages of the completions of a group are written to the bucket
 * first, one object per workspace of the group (a part per page, ResultObjects.putPages): one
 * write per workspace, not one per job, and never an object holding two workspaces' results, so
 * deleting a workspace (which deletes the objects its rows name, once no other row names them)
 * leaves none of its bytes behind (extensions-3.md 1). The writes of the workspaces run side by
 * side. A new_only job's last page is cut down at its completion, and written then; an empty
 * page stays an empty row. If the bucket does not answer, every completion of the group fails
 * with StoreUnavailable, and their attempts are retried (run-job.ts).
 */
async function withFinalObjects(services: Resources, completions: readonly Completion[]): Promise<readonly Completion[]> {
  if (services.config.resultStore !== 's3') return completions;
  const writing = completions.flatMap((c, i) =>
    c.delivered.finalPage && c.delivered.finalPage.items.length > 0 && !c.job.new_only ? [i] : [],
  );
  if (writing.length === 0) return completions;
  const byWorkspace = new Map<string, number[]>();
  for (const i of writing) {
    const workspaceId = completions[i].job.workspace_id;
    byWorkspace.set(workspaceId, [...(byWorkspace.get(workspaceId) ?? []), i]);
  }
  const out = [...completions];
  await Promise.all(
    [...byWorkspace.values()].map(async (members) => {
      const pages = members.map((i) => {
        const { job, delivered } = completions[i];
        return { jobId: job.id, pageNo: delivered.finalPage!.pageNo, lines: jsonbTexts(delivered.finalPage!.items) };
      });
      const { key, parts } = await bucketOf(services).putPages(pages);
      members.forEach((i, k) => {
        const c = completions[i];
        const part = parts[k];
        // One page alone is the whole object; several of the workspace share it, each at its offset.
        const object = { key, offset: members.length === 1 ? null : part.offset, bytes: part.bytes };
        out[i] = { ...c, delivered: { ...c.delivered, finalPage: { ...c.delivered.finalPage!, object } } };
      });
    }),
  );
  return out;
}

/**
 * One transaction for the group. When Postgres refuses its data (a result it cannot store),
 * each job is tried alone, so only the job at fault fails its attempt. Any other failure is
 * every attempt's answer.
 */
async function completeGroup(services: Resources, items: readonly Completion[]): Promise<FlushResult<boolean>> {
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

async function completeTogether(services: Resources, items: readonly Completion[]): Promise<FlushResult<boolean>> {
  const { results, events } = await retryDeadlocks(services.log, 'job completion', () =>
    services.db.transaction().execute((tx) => completeInTransaction(tx, services.config, services.clock.now(), items)),
  );
  announceEnded(
    services,
    items.filter((_, i) => results[i] === true).map((c) => c.job),
    'completed',
    events > 0,
  );
  return results;
}

/** A new_only schedule's job: its items claimed in its feed's delivered set, then completed for those alone. */
async function completeNewOnly(services: Resources, c: Completion): Promise<boolean> {
  let replaced: string[] = [];
  const { results, events } = await retryDeadlocks(services.log, 'job completion', () =>
    services.db.transaction().execute(async (tx) => {
      const kept = await keepOnlyNew(tx, services, c.job, c.lease, c.delivered.finalPage);
      if (!kept) return { results: [false], events: 0 };
      replaced = kept.replaced;
      return completeInTransaction(tx, services.config, services.clock.now(), [
        { ...c, delivered: { ...kept, primary: kept.total, bundled: 0 } },
      ]);
    }),
  );
  if (results[0] === true) {
    announceEnded(services, [c.job], 'completed', events > 0);
    await deleteObjectsQuietly(services, replaced);
  }
  return results[0] === true;
}

/**
 * Two statements, sent together:
 * 1. the jobs completed (job rows locked in id order first; lease and status tested on the
 *    locked rows, re-read after any lock wait), their final result pages written, and their
 *    held reservations claimed for settlement at their charge;
 * 2. the balance rows of their workspaces locked, in workspace order;
 * then the settlements booked (money module) and the auto-recharges they leave due
 * (billing/triggers.ts). Locks are taken jobs, then reservations, then
 * balances: the order of every other writer of them (cancellation, failure, reconciler).
 * The first statement also writes the completed jobs' webhook events (job.completed and their
 * batches' checks) where a webhook of the workspace takes them; `events` counts those written.
 */
async function completeInTransaction(
  tx: Tx,
  config: Pick<AppConfig, 'creditPacks'>,
  now: Date,
  items: readonly Completion[],
): Promise<{ results: FlushResult<boolean>; events: number }> {
  const values = items.map(({ job, lease, delivered }, idx) => ({
    idx,
    id: job.id,
    lease,
    message:
      delivered.total === 0
        ? 'Completed with no results'
        : delivered.total === 1
          ? 'Completed with 1 result'
          : `Completed with ${delivered.total} results`,
    total: delivered.total,
    credits: chargeOf(job, delivered.primary, delivered.bundled),
    event_id: newId('evt'),
    check_id: job.batch_id === null ? null : newId('evt'),
  }));
  const ids = [...new Set(items.map((c) => c.job.id))];
  // Pages of every item are sent; only those of jobs completed here are written.
  const pages = items.flatMap(({ job, lease, delivered: { finalPage } }) =>
    finalPage
      ? [
          {
            job_id: job.id,
            lease,
            page_no: finalPage.pageNo,
            item_count: finalPage.items.length,
            items: finalPage.object ? null : finalPage.items,
            object_key: finalPage.object?.key ?? null,
            object_offset: finalPage.object?.offset ?? null,
            stored_bytes: finalPage.object?.bytes ?? null,
          },
        ]
      : [],
  );
  const writePages =
    pages.length === 0
      ? sql``
      : sql`, pages as (
          insert into job_result_pages (job_id, page_no, item_count, items, object_key, object_offset, stored_bytes)
          select p.job_id, p.page_no, p.item_count, p.items, p.object_key, p.object_offset, p.stored_bytes
          from ${jsonRows(pages, 'job_id text, lease text, page_no int, item_count int, items jsonb, object_key text, object_offset bigint, stored_bytes int')} as p
          join done d on d.id = p.job_id and d.lease = p.lease
          on conflict (job_id, page_no) do update
            set item_count = excluded.item_count, items = excluded.items, object_key = excluded.object_key,
                object_offset = excluded.object_offset, stored_bytes = excluded.stored_bytes
        )`;
  const eventInsert = insertEvents(
    sql`(
      select d.event_id as id, d.workspace_id, 'job.completed' as type, d.id as subject_id from done d
      union all
      select d.check_id, d.workspace_id, ${BATCH_CHILD_ENDED}, d.batch_id from done d where d.batch_id is not null
    )`,
    now,
  );
  const completion = sql<ClaimedReservation & { idx: number; reservation_id: string | null; events: number }>`
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
      from ${jsonRows(values, 'idx int, id text, lease text, message text, total int, credits int, event_id text, check_id text')} as v, locked k
      where k.id = v.id
        and k.lease_token = v.lease
        and k.status = 'running'
        and j.id = k.id
      returning v.idx, j.id, v.lease, v.credits, j.workspace_id, j.batch_id, v.event_id, v.check_id
    )${writePages},
    settled as (${claimHeldReservations(now, sql`(select d.id as job_id, d.credits as charge from done d) as v`)}),
    events as (${eventInsert})
    select d.idx, s.id as reservation_id, s.workspace_id, s.job_id, s.plan_amount, s.promo_amount, s.purchased_amount, s.units,
           s.settled_credits, s.created_at, s.api_key_id, s.monthly_quota, s.recharge_below, s.recharge_pack_id,
           (select count(*) from events)::int as events
    from done d left join settled s on s.job_id = d.id
    order by d.idx
  `;
  const [rows, balanceRows] = await sendTogether(
    tx,
    completion.compile(tx),
    balanceLock(
      tx,
      items.map(({ job }) => job.workspace_id),
    ).compile(),
  );
  const results: boolean[] = items.map(() => false);
  const settlements: Settlement[] = [];
  for (const row of rows) {
    results[row.idx] = true;
    if (row.reservation_id !== null)
      settlements.push({ reservation: { ...row, id: row.reservation_id }, units: items[row.idx].delivered.total });
  }
  const events = rows[0]?.events ?? 0;
  if (settlements.length === 0) return { results, events };
  const { after } = await bookSettlements(tx, now, settlements, balanceRows);
  const recharging = settlements.filter((s) => s.reservation.recharge_below !== null).map((s) => s.reservation);
  if (recharging.length > 0) await afterSettlements(tx, config, now, recharging, after);
  return { results, events };
}

// ---------------------------------------------------------------------------------------------
// The process's completions, grouped

/** Completions of job attempts; `services.completions` of every process. */
export interface JobCompletions {
  /** Whether the job completed (its lease still held) and its reservation was settled. */
  submit(completion: Completion): Promise<boolean>;
}

/**
 * Group commit of the worker's completions: the completions that arrive together share one
 * transaction (completeJobs). The worker's slots bound them, so they wait rather than being
 * refused.
 */
export class GroupJobCompletions extends GroupCommit<Completion, boolean> implements JobCompletions {
  constructor(resources: Resources) {
    super((items) => completeJobs(resources, items), { maxBatch: 64 });
  }
}
