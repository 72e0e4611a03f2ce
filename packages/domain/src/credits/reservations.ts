import { type RawBuilder, sql } from 'kysely';
import { jsonRows, type Tx } from '@sdx/db';
import { periodStartOf } from '../time';
import { type Balance, balanceLock, lockBalances, type PlannedReservation } from './balances';
import { bookSettlements, type ClaimedReservation, monthReturn, post, type Settlement } from './postings';

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
    (b) =>
      sql`(${b.workspace_id}::text, ${b.plan_reserved}::bigint, ${b.promo_reserved}::bigint, ${b.purchased_reserved}::bigint, ${b.units_reserved}::bigint, ${b.month_spent}::bigint)`,
  );
  // Each key's month spend rises by what its submissions reserved (a new period starts it again).
  const period = periodStartOf(now);
  const byKey = new Map<string, { workspace_id: string; spent: number }>();
  for (const { reservation: r } of planned) {
    if (!r.api_key_id) continue;
    const entry = byKey.get(r.api_key_id) ?? { workspace_id: r.workspace_id, spent: 0 };
    entry.spent += r.plan_amount + r.promo_amount + r.purchased_amount;
    byKey.set(r.api_key_id, entry);
  }
  const keySpend = [...byKey].map(([key_id, e]) => ({ key_id, workspace_id: e.workspace_id, period_start: period, spent: e.spent }));
  return (
    tx
      .with('reservations', (db) => db.insertInto('credit_reservations').values(planned.map((p) => p.reservation)))
      .with('ledger', (db) => db.insertInto('credit_ledger').values(planned.map((p) => p.ledger)))
      .with('key_spend', () =>
        keySpend.length === 0
          ? sql<Record<string, never>>`(select 1)`
          : sql<Record<string, never>>`(
              insert into api_key_spend (key_id, workspace_id, period_start, spent)
              select k.key_id, k.workspace_id, k.period_start, k.spent
              from ${jsonRows(keySpend, 'key_id text, workspace_id text, period_start date, spent bigint')} as k
              on conflict (key_id) do update
                set spent = case when api_key_spend.period_start = excluded.period_start then api_key_spend.spent + excluded.spent else excluded.spent end,
                    cap_alerted = api_key_spend.cap_alerted and api_key_spend.period_start = excluded.period_start,
                    period_start = excluded.period_start
            )`,
      )
      // A raw CTE body is printed as is: its parentheses are part of it.
      .with(
        'balances',
        () => sql<Record<string, never>>`(
          update credit_balances b
          set plan_reserved = v.plan_reserved, promo_reserved = v.promo_reserved, purchased_reserved = v.purchased_reserved,
              units_reserved = v.units_reserved, month_spent = v.month_spent, updated_at = ${now}
          from (values ${sql.join(totals)}) as v(workspace_id, plan_reserved, promo_reserved, purchased_reserved, units_reserved, month_spent)
          where b.workspace_id = v.workspace_id
        )`,
      )
  );
}

/** Writes planned reservations on their own (no job rows with them), in one statement. */
export async function writeReservations(
  tx: Tx,
  planned: readonly PlannedReservation[],
  balances: readonly Balance[],
  now: Date,
): Promise<void> {
  if (planned.length === 0) return;
  await withReservations(tx, planned, balances, now)
    .selectNoFrom(sql<number>`1`.as('written'))
    .execute();
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
    from ${source}, workspaces w
    where r.job_id = v.job_id and r.status = 'held' and w.id = r.workspace_id
    returning r.id, r.workspace_id, r.job_id, r.plan_amount, r.promo_amount, r.purchased_amount, r.units, r.settled_credits,
              r.created_at, r.api_key_id, w.monthly_quota,
              case when w.auto_recharge_enabled then w.auto_recharge_threshold end as recharge_below, w.auto_recharge_pack_id as recharge_pack_id
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
  const claimed = await claimHeldReservations(
    now,
    sql`${jsonRows(
      requests.map((r) => ({ job_id: r.jobId, charge: r.credits })),
      'job_id text, charge bigint',
    )} as v`,
  ).execute(tx);
  const byJob = new Map(claimed.rows.map((r) => [r.job_id, r]));
  const settlements: Settlement[] = [];
  for (const request of requests) {
    const reservation = byJob.get(request.jobId);
    if (reservation) settlements.push({ reservation, units: request.units });
  }
  if (settlements.length === 0) return new Map();
  return (
    await bookSettlements(
      tx,
      now,
      settlements,
      await balanceLock(
        tx,
        settlements.map((s) => s.reservation.workspace_id),
      ).execute(),
    )
  ).charged;
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
    claimed.map((r) => {
      const balance = balances.get(r.workspace_id)!;
      const held = r.plan_amount + r.promo_amount + r.purchased_amount;
      const month = monthReturn(r, balance, held);
      return {
        entry: {
          workspace_id: r.workspace_id,
          credits: held,
          plan_credits: r.plan_amount,
          promo_credits: r.promo_amount,
          purchased_credits: r.purchased_amount,
          units: r.units,
          reservation_id: r.id,
          job_id: r.job_id,
          period_start: balance.period_start,
          note,
        },
        delta: {
          plan_reserved: -r.plan_amount,
          promo_reserved: -r.promo_amount,
          purchased_reserved: -r.purchased_amount,
          units_reserved: -r.units,
          month_spent: month.month_spent,
        },
        keyReturn: month.keyReturn,
      };
    }),
  );
  return new Set(claimed.map((r) => r.job_id));
}

/** releaseReservations for one job: false when its reservation was not held. */
export async function releaseReservation(tx: Tx, now: Date, jobId: string, note: string): Promise<boolean> {
  return (await releaseReservations(tx, now, [jobId], note)).size > 0;
}
