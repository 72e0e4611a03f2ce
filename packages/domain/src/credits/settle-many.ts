import { type RawBuilder, sql } from 'kysely';
import { jsonRows, type ReservationRow, thenCommit, type Tx } from '@sdx/db';
import { type Balance, lockBalances, rollLocked } from './credits';

/** A reservation just moved from held to settled, with its workspace's plan quota. */
export type ClaimedReservation = Pick<
  ReservationRow,
  'id' | 'workspace_id' | 'job_id' | 'plan_amount' | 'promo_amount' | 'purchased_amount' | 'units' | 'settled_credits'
> & { monthly_quota: number };

/** A claimed reservation and the results its job delivered. */
export interface Settlement {
  reservation: ClaimedReservation;
  units: number;
}

/**
 * The statement that moves held reservations to settled, as SQL so that a caller can run it
 * inside a larger statement. `source` is a relation aliased `v` with columns job_id and charge
 * (one row per job). settled_credits is the charge, never negative and capped at what was
 * reserved; the quota comes back for the month rollover of the balance lock.
 * A reservation no longer held (settled or released before) is left alone and not returned.
 */
export function claimHeldReservations(now: Date, source: RawBuilder<unknown>): RawBuilder<ClaimedReservation> {
  return sql<ClaimedReservation>`
    update credit_reservations r
    set status = 'settled',
        settled_credits = least(greatest(v.charge, 0), r.plan_amount + r.promo_amount + r.purchased_amount),
        closed_at = ${now}
    from ${source}
    where r.job_id = v.job_id and r.status = 'held'
    returning r.id, r.workspace_id, r.job_id, r.plan_amount, r.promo_amount, r.purchased_amount, r.units, r.settled_credits,
              (select w.monthly_quota from workspaces w where w.id = r.workspace_id) as monthly_quota
  `;
}

interface Spent {
  plan_reserved: number;
  promo_reserved: number;
  purchased_reserved: number;
  units_reserved: number;
  plan: number;
  promo: number;
  purchased: number;
  units: number;
  charge: number;
}

/**
 * Books reservations claimed by claimHeldReservations: locks each workspace's balance row once
 * (lockBalances: workspace_id order, month rollover and promotional expiry applied), then one
 * statement inserts every ledger entry and applies each workspace's summed change to its
 * balance. Per job: the charge drawn from the reservation's plan, then promotional, then
 * purchased parts, the rest returned (noted in the entry).
 * Ledger entries follow the order of `settlements`. Returns the credits charged per job.
 */
export async function settleClaimed(
  tx: Tx,
  now: Date,
  settlements: readonly Settlement[],
  { last = false, lockedRows }: { last?: boolean; lockedRows?: readonly Balance[] } = {},
): Promise<Map<string, number>> {
  const charged = new Map<string, number>();
  if (settlements.length === 0) return charged;
  const quotas = new Map(settlements.map((s) => [s.reservation.workspace_id, s.reservation.monthly_quota]));
  const workspaces = [...quotas].map(([id, monthly_quota]) => ({ id, monthly_quota }));
  // The caller may have locked the rows already (balanceLock sent with its own statement, see
  // completeJobs): only their rollovers are left to apply.
  const balances = lockedRows
    ? await rollLocked(
        tx,
        lockedRows.filter((row) => quotas.has(row.workspace_id)),
        workspaces,
        now,
      )
    : await lockBalances(tx, workspaces, now);

  const ledger: Array<Record<string, unknown>> = [];
  const spent = new Map<string, Spent>();
  for (const { reservation, units } of settlements) {
    const balance = balances.get(reservation.workspace_id);
    if (!balance) throw new Error(`workspace ${reservation.workspace_id} has no balance row`);
    const reservedTotal = reservation.plan_amount + reservation.promo_amount + reservation.purchased_amount;
    const charge = reservation.settled_credits ?? 0;
    const plan = Math.min(charge, reservation.plan_amount);
    const promo = Math.min(charge - plan, reservation.promo_amount);
    const purchased = charge - plan - promo;
    const note = charge < reservedTotal ? `released ${reservedTotal - charge} unused credits` : null;
    ledger.push({
      workspace_id: reservation.workspace_id,
      credits: charge,
      plan_credits: plan,
      promo_credits: promo,
      purchased_credits: purchased,
      units,
      reservation_id: reservation.id,
      job_id: reservation.job_id,
      period_start: balance.period_start,
      note,
    });
    const s = spent.get(reservation.workspace_id) ?? {
      plan_reserved: 0,
      promo_reserved: 0,
      purchased_reserved: 0,
      units_reserved: 0,
      plan: 0,
      promo: 0,
      purchased: 0,
      units: 0,
      charge: 0,
    };
    s.plan_reserved += reservation.plan_amount;
    s.promo_reserved += reservation.promo_amount;
    s.purchased_reserved += reservation.purchased_amount;
    s.units_reserved += reservation.units;
    s.plan += plan;
    s.promo += promo;
    s.purchased += purchased;
    s.units += units;
    s.charge += charge;
    spent.set(reservation.workspace_id, s);
    charged.set(reservation.job_id, charge);
  }

  const rows = [...spent.entries()].map(([workspace_id, s]) => ({ workspace_id, ...s }));
  // The ledger insert runs as part of the balance update (a data-modifying WITH always runs):
  // one round trip for both, in one statement.
  await sql`
    with ledger as (
      insert into credit_ledger
        (workspace_id, entry_type, credits, plan_credits, promo_credits, purchased_credits, units, reservation_id, job_id, period_start, note)
      select l.workspace_id, 'settle', l.credits, l.plan_credits, l.promo_credits, l.purchased_credits, l.units, l.reservation_id, l.job_id,
             l.period_start, l.note
      from ${jsonRows(ledger, 'workspace_id text, credits bigint, plan_credits bigint, promo_credits bigint, purchased_credits bigint, units bigint, reservation_id text, job_id text, period_start date, note text')} as l
    )
    update credit_balances b
    set plan_reserved = b.plan_reserved - v.plan_reserved,
        promo_reserved = b.promo_reserved - v.promo_reserved,
        purchased_reserved = b.purchased_reserved - v.purchased_reserved,
        units_reserved = b.units_reserved - v.units_reserved,
        plan_used = b.plan_used + v.plan,
        promo_balance = b.promo_balance - v.promo,
        purchased_balance = b.purchased_balance - v.purchased,
        period_promo_spent = b.period_promo_spent + v.promo,
        period_purchased_spent = b.period_purchased_spent + v.purchased,
        units_used = b.units_used + v.units,
        lifetime_spent = b.lifetime_spent + v.charge,
        updated_at = ${now}
    from ${jsonRows(rows, 'workspace_id text, plan_reserved bigint, promo_reserved bigint, purchased_reserved bigint, units_reserved bigint, plan bigint, promo bigint, purchased bigint, units bigint, charge bigint')} as v
    where b.workspace_id = v.workspace_id
    ${last ? thenCommit : sql``}
  `.execute(tx);
  return charged;
}
