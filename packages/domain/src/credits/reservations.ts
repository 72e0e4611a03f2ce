import { type RawBuilder, sql } from 'kysely';
import { jsonRows, type Tx } from '@sdx/db';
import { type Balance, balanceLock, bookSettlements, type ClaimedReservation, lockBalances, type PlannedReservation, post, type Settlement } from './balances';

/**
 * Reservations (part of the money module, credits/): a job's maximum cost reserved at admission
 * (planned by balances.ts planReservation, written here), then exactly once either claimed for
 * settlement (claimHeldReservations; the booking is balances.ts bookSettlements) or released
 * whole.
 */

// ---------------------------------------------------------------------------------------------
// Reserve

/**
 * The writes of planned reservations, as the WITH clauses of one statement: the reservation
 * rows, their ledger entries, and each balance's reserved totals as planned (the caller holds
 * the balance locks, so the planned totals are the truth). The caller completes the statement
 * (the admission inserts its job rows in it).
 */
export function withReservations(tx: Tx, planned: readonly PlannedReservation[], balances: readonly Balance[], now: Date) {
  const totals = balances.map(
    (b) => sql`(${b.workspace_id}::text, ${b.plan_reserved}::bigint, ${b.promo_reserved}::bigint, ${b.purchased_reserved}::bigint, ${b.units_reserved}::bigint)`,
  );
  return (
    tx
      .with('reservations', (db) => db.insertInto('credit_reservations').values(planned.map((p) => p.reservation)))
      .with('ledger', (db) => db.insertInto('credit_ledger').values(planned.map((p) => p.ledger)))
      // A raw CTE body is printed as is: its parentheses are part of it.
      .with(
        'balances',
        () => sql<Record<string, never>>`(
          update credit_balances b
          set plan_reserved = v.plan_reserved, promo_reserved = v.promo_reserved, purchased_reserved = v.purchased_reserved,
              units_reserved = v.units_reserved, updated_at = ${now}
          from (values ${sql.join(totals)}) as v(workspace_id, plan_reserved, promo_reserved, purchased_reserved, units_reserved)
          where b.workspace_id = v.workspace_id
        )`,
      )
  );
}

/** Writes planned reservations on their own (no job rows with them), in one statement. */
export async function writeReservations(tx: Tx, planned: readonly PlannedReservation[], balances: readonly Balance[], now: Date): Promise<void> {
  if (planned.length === 0) return;
  await withReservations(tx, planned, balances, now).selectNoFrom(sql<number>`1`.as('written')).execute();
}

// ---------------------------------------------------------------------------------------------
// Settle

/**
 * The statement that moves held reservations to settled, as SQL so that a caller can run it
 * inside a larger statement (the completion of jobs). `source` is a relation aliased `v` with
 * columns job_id and charge (one row per job), the charge decided by the caller (chargeOf, for
 * a job). It settles at most what the reservation holds. A reservation no longer held (settled or released before) is left
 * alone and not returned: a reservation is settled at most once.
 */
export function claimHeldReservations(now: Date, source: RawBuilder<unknown>): RawBuilder<ClaimedReservation> {
  return sql<ClaimedReservation>`
    update credit_reservations r
    set status = 'settled',
        -- the invariant of a reservation: a settlement never takes more than it holds
        settled_credits = least(greatest(v.charge, 0), r.plan_amount + r.promo_amount + r.purchased_amount),
        closed_at = ${now}
    from ${source}
    where r.job_id = v.job_id and r.status = 'held'
    returning r.id, r.workspace_id, r.job_id, r.plan_amount, r.promo_amount, r.purchased_amount, r.units, r.settled_credits,
              (select w.monthly_quota from workspaces w where w.id = r.workspace_id) as monthly_quota
  `;
}

export interface SettleRequest {
  jobId: string;
  /** Credits the delivered results cost (settled at most at what was reserved). */
  credits: number;
  /** Results delivered. */
  units: number;
}

/**
 * Settles held reservations of jobs on their own, each at most once: the claim, the balance
 * locks, the booking. (A job's completion runs the same claim and booking inside its own
 * statement, see the job-state module.) Returns the credits charged per job whose reservation
 * was still held.
 */
export async function settleReservations(tx: Tx, now: Date, requests: readonly SettleRequest[]): Promise<Map<string, number>> {
  if (requests.length === 0) return new Map();
  const claimed = await claimHeldReservations(now, sql`${jsonRows(requests.map((r) => ({ job_id: r.jobId, charge: r.credits })), 'job_id text, charge bigint')} as v`).execute(tx);
  const byJob = new Map(claimed.rows.map((r) => [r.job_id, r]));
  const settlements: Settlement[] = [];
  for (const request of requests) {
    const reservation = byJob.get(request.jobId);
    if (reservation) settlements.push({ reservation, units: request.units });
  }
  if (settlements.length === 0) return new Map();
  return bookSettlements(tx, now, settlements, await balanceLock(tx, settlements.map((s) => s.reservation.workspace_id)).execute());
}

// ---------------------------------------------------------------------------------------------
// Release

/**
 * Returns the whole held reservations of jobs that end without billing (failure, cancellation,
 * exhausted retries), each at most once: the reservations are claimed (held → released), their
 * workspaces' balances locked, one ledger entry per reservation written and each balance's
 * reserved totals lowered. Returns the IDs of the jobs whose reservation was still held.
 */
export async function releaseReservations(tx: Tx, now: Date, jobIds: readonly string[], note: string): Promise<Set<string>> {
  if (jobIds.length === 0) return new Set();
  const claimed = await tx
    .updateTable('credit_reservations')
    .set({ status: 'released', settled_credits: 0, closed_at: now })
    .where('job_id', 'in', [...new Set(jobIds)])
    .where('status', '=', 'held')
    .returningAll()
    .execute();
  if (claimed.length === 0) return new Set();
  const workspaceIds = [...new Set(claimed.map((r) => r.workspace_id))];
  const quotas = await tx.selectFrom('workspaces').select(['id', 'monthly_quota']).where('id', 'in', workspaceIds).execute();
  const balances = await lockBalances(tx, quotas, now);
  await post(
    tx,
    now,
    'release',
    claimed.map((r) => ({
      entry: {
        workspace_id: r.workspace_id,
        credits: r.plan_amount + r.promo_amount + r.purchased_amount,
        plan_credits: r.plan_amount,
        promo_credits: r.promo_amount,
        purchased_credits: r.purchased_amount,
        units: r.units,
        reservation_id: r.id,
        job_id: r.job_id,
        period_start: balances.get(r.workspace_id)!.period_start,
        note,
      },
      delta: { plan_reserved: -r.plan_amount, promo_reserved: -r.promo_amount, purchased_reserved: -r.purchased_amount, units_reserved: -r.units },
    })),
  );
  return new Set(claimed.map((r) => r.job_id));
}

/** releaseReservations for one job: false when its reservation was not held. */
export async function releaseReservation(tx: Tx, now: Date, jobId: string, note: string): Promise<boolean> {
  return (await releaseReservations(tx, now, [jobId], note)).size > 0;
}

