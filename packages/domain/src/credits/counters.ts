import { sql } from 'kysely';
import type { Db, Tx } from '@sdx/db';

/**
 * Counters (part of the money module, credits/): the stored aggregates of the balance rows and
 * of the keys' month spend, recomputed from their source of truth (the reservations and the
 * ledger) and mended where they differ.
 *
 * Admission, settlement and release keep every counter in the same transaction as the rows it
 * sums, so on one release they never drift. They drift when a release that does not keep one
 * runs beside a release that reads it: during a rolling upgrade from 0.9.0 (which reserves and
 * settles without keeping `month_spent` or the keys' spend) the caps would undercount for the
 * rest of the month. So the upgrade's contract step (`npm run migrate -- --post-roll`, or
 * `npm run admin -- reconcile-counters`) and the worker's reconciler (every
 * COUNTER_RECONCILE_INTERVAL_MS) run `reconcileCounters` (docs/deployment.md "Expand and
 * contract"). The rules are those of the ledger audit (packages/testing/src/ledger.ts):
 * - `plan_reserved`, `promo_reserved`, `purchased_reserved`, `units_reserved`: the held
 *   reservations' amounts;
 * - `lifetime_spent`: the settle entries' credits;
 * - `purchased_balance`: grants, purchases and refunds of purchased credits less what settlements
 *   drew from them; `lifetime_purchased`: grants and purchases of purchased credits;
 * - `month_spent` (the workspace's, and `api_key_spend.spent` of each key): what the period's
 *   reservations hold (held) or settled (settled), released ones nothing.
 * A workspace is mended in a transaction of its own that holds its balance row's lock (every
 * writer of these counters takes it first), so a reservation or settlement made meanwhile is
 * either counted in the recomputed value or waits for it and adds itself after.
 */

/** What a period's reservations count in its month's spend: held ones their amount, settled ones their charge. */
const COUNTED = sql`case r.status when 'held' then r.plan_amount + r.promo_amount + r.purchased_amount when 'settled' then coalesce(r.settled_credits, 0) else 0 end`;

/** The balance columns recomputed, in this order. */
export const BALANCE_COUNTERS = [
  'plan_reserved',
  'promo_reserved',
  'purchased_reserved',
  'units_reserved',
  'lifetime_spent',
  'purchased_balance',
  'lifetime_purchased',
  'month_spent',
] as const;
export type BalanceCounter = (typeof BALANCE_COUNTERS)[number];

export interface CounterFix {
  workspace_id: string;
  /** A balance column, or `key_spend` for a key's month spend. */
  counter: BalanceCounter | 'key_spend';
  key_id?: string;
  was: number;
  now: number;
}

export interface CounterReport {
  /** Balance rows checked. */
  workspaces: number;
  /** Every counter that differed from its source and was set to it. */
  fixes: CounterFix[];
}

/** The stored and recomputed counters of `workspaceIds` (every workspace when null). */
async function balanceCounters(db: Db | Tx, workspaceIds: readonly string[] | null) {
  const only = workspaceIds === null ? sql`true` : sql`b.workspace_id = any(${[...workspaceIds]}::text[])`;
  const { rows } = await sql<Record<string, string>>`
    select b.workspace_id,
           ${sql.join(BALANCE_COUNTERS.map((c) => sql`${sql.ref(`b.${c}`)}::text as ${sql.ref(`${c}_was`)}`))},
           held.plan::text as plan_reserved, held.promo::text as promo_reserved, held.purchased::text as purchased_reserved,
           held.units::text as units_reserved,
           ledger.settled::text as lifetime_spent, (ledger.added - ledger.drawn)::text as purchased_balance,
           ledger.granted::text as lifetime_purchased,
           month.counted::text as month_spent
    from credit_balances b
    cross join lateral (
      select coalesce(sum(r.plan_amount), 0) as plan, coalesce(sum(r.promo_amount), 0) as promo,
             coalesce(sum(r.purchased_amount), 0) as purchased, coalesce(sum(r.units), 0) as units
      from credit_reservations r where r.workspace_id = b.workspace_id and r.status = 'held') held
    cross join lateral (
      select coalesce(sum(l.credits) filter (where l.entry_type = 'settle'), 0) as settled,
             coalesce(sum(l.purchased_credits) filter (where l.entry_type in ('grant', 'purchase', 'refund')), 0) as added,
             coalesce(sum(l.purchased_credits) filter (where l.entry_type = 'settle'), 0) as drawn,
             coalesce(sum(l.purchased_credits) filter (where l.entry_type in ('grant', 'purchase')), 0) as granted
      from credit_ledger l where l.workspace_id = b.workspace_id) ledger
    cross join lateral (
      select coalesce(sum(${COUNTED}), 0) as counted
      from credit_reservations r
      where r.workspace_id = b.workspace_id
        and r.created_at >= b.period_start::timestamp at time zone 'UTC'
        and r.created_at < (b.period_start + interval '1 month')::timestamp at time zone 'UTC') month
    where ${only}
    order by b.workspace_id`.execute(db);
  return rows;
}

/** The keys' stored and recomputed month spend, of `workspaceIds` (every workspace when null). */
async function keyCounters(db: Db | Tx, workspaceIds: readonly string[] | null) {
  const only = workspaceIds === null ? sql`true` : sql`s.workspace_id = any(${[...workspaceIds]}::text[])`;
  const { rows } = await sql<{ key_id: string; workspace_id: string; was: string; counted: string }>`
    select s.key_id, s.workspace_id, s.spent::text as was,
           coalesce((select sum(${COUNTED}) from credit_reservations r
                     where r.api_key_id = s.key_id
                       and r.created_at >= s.period_start::timestamp at time zone 'UTC'
                       and r.created_at < (s.period_start + interval '1 month')::timestamp at time zone 'UTC'), 0)::text as counted
    from api_key_spend s
    where ${only}
    order by s.key_id`.execute(db);
  return rows;
}

function differing(rows: Array<Record<string, string>>): CounterFix[] {
  const out: CounterFix[] = [];
  for (const row of rows) {
    for (const c of BALANCE_COUNTERS) {
      if (row[`${c}_was`] !== row[c])
        out.push({ workspace_id: row.workspace_id, counter: c, was: Number(row[`${c}_was`]), now: Number(row[c]) });
    }
  }
  return out;
}

/**
 * Recomputes every counter from its source and sets those that differ (each workspace in its
 * own transaction, under its balance row's lock). Reads first without locking, so a pass over
 * exact counters writes nothing and locks nothing.
 */
export async function reconcileCounters(db: Db): Promise<CounterReport> {
  const balances = await balanceCounters(db, null);
  const keys = await keyCounters(db, null);
  const suspects = new Set([
    ...differing(balances).map((f) => f.workspace_id),
    ...keys.filter((k) => k.was !== k.counted).map((k) => k.workspace_id),
  ]);
  const fixes: CounterFix[] = [];
  for (const workspaceId of [...suspects].sort()) {
    fixes.push(
      ...(await db.transaction().execute(async (tx) => {
        await sql`select 1 from credit_balances where workspace_id = ${workspaceId} for update`.execute(tx);
        // Under the lock, every writer that came before has committed: recompute now.
        const mended = differing(await balanceCounters(tx, [workspaceId]));
        if (mended.length > 0) {
          await sql`
            update credit_balances
            set ${sql.join(mended.map((f) => sql`${sql.ref(f.counter)} = ${f.now}`))}
            where workspace_id = ${workspaceId}`.execute(tx);
        }
        const keyRows = await keyCounters(tx, [workspaceId]);
        for (const k of keyRows.filter((row) => row.was !== row.counted)) {
          await sql`update api_key_spend set spent = ${k.counted}::bigint where key_id = ${k.key_id}`.execute(tx);
          mended.push({ workspace_id: workspaceId, counter: 'key_spend', key_id: k.key_id, was: Number(k.was), now: Number(k.counted) });
        }
        return mended;
      })),
    );
  }
  return { workspaces: balances.length, fixes };
}
