import { sql } from 'kysely';
import { jsonRows, type ReservationRow, type Tx } from '@sdx/db';
import { recordCreditsSettled } from '@sdx/metrics';
import { periodStartOf } from '../time';
import { type Balance, type Buckets, drawInOrder, rollOver } from './balances';

/**
 * Postings (part of the money module, credits/): the ledger entries of settlements and
 * releases, each with the change it makes to its workspace's balance row (and to its key's month
 * spend), written in one statement; and the booking of settlements (the charge drawn from what
 * the reservation holds, the rest returned). balances.ts has the balance arithmetic and rows.
 */

// ---------------------------------------------------------------------------------------------
// Settle

/** A reservation just moved from held to settled, with the charge it settled at and its workspace's plan quota. */
export type ClaimedReservation = Pick<
  ReservationRow,
  | 'id'
  | 'workspace_id'
  | 'job_id'
  | 'plan_amount'
  | 'promo_amount'
  | 'purchased_amount'
  | 'units'
  | 'settled_credits'
  | 'created_at'
  | 'api_key_id'
> & {
  monthly_quota: number;
  /** The workspace's auto-recharge threshold when auto-recharge is on (else null), and its pack. */
  recharge_below: number | null;
  recharge_pack_id: string | null;
};

/** A claimed reservation and the results its job delivered. */
export interface Settlement {
  reservation: ClaimedReservation;
  units: number;
}

/** The balance columns a posting changes: each is added to as it is. */
const DELTA_COLUMNS = [
  'plan_reserved',
  'promo_reserved',
  'purchased_reserved',
  'units_reserved',
  'plan_used',
  'promo_balance',
  'purchased_balance',
  'period_promo_spent',
  'period_purchased_spent',
  'units_used',
  'lifetime_spent',
  'month_spent',
] as const;

/** A change to one balance row, summed over the entries that explain it. */
export type BalanceDelta = Record<(typeof DELTA_COLUMNS)[number], number>;

/** A ledger entry of a settlement or release, with the balance change it explains. */
export interface Posting {
  entry: {
    workspace_id: string;
    credits: number;
    plan_credits: number;
    promo_credits: number;
    purchased_credits: number;
    units: number;
    reservation_id: string;
    job_id: string;
    period_start: string;
    note: string | null;
  };
  delta: Partial<BalanceDelta>;
  /** Credits a key's month spend gives back (what the reservation held and was not spent), when they count in its current period. */
  keyReturn?: { keyId: string; periodStart: string; credits: number };
}

/**
 * What a closing reservation gives back to the month's spend: the credits it held and did not
 * spend, when it was made in the balance's current period (a reservation counts in the month it
 * was made; a past month's spend is not kept).
 */
export function monthReturn(
  reservation: Pick<ReservationRow, 'created_at' | 'api_key_id'>,
  balance: Pick<Balance, 'period_start'>,
  returned: number,
) {
  if (returned <= 0 || periodStartOf(reservation.created_at) !== balance.period_start) return { month_spent: 0, keyReturn: undefined };
  return {
    month_spent: -returned,
    keyReturn:
      reservation.api_key_id === null ? undefined : { keyId: reservation.api_key_id, periodStart: balance.period_start, credits: returned },
  };
}

/**
 * Writes postings in one statement: their ledger entries (in order), and each workspace's
 * balance changed by the sum of its postings' deltas. The balance rows must be locked.
 */
export async function post(
  tx: Tx,
  now: Date,
  entryType: 'settle' | 'release',
  postings: readonly Posting[],
): Promise<Map<string, BalanceDelta>> {
  if (postings.length === 0) return new Map();
  const sums = new Map<string, BalanceDelta>();
  for (const { entry, delta } of postings) {
    const sum = sums.get(entry.workspace_id) ?? (Object.fromEntries(DELTA_COLUMNS.map((c) => [c, 0])) as BalanceDelta);
    for (const [column, value] of Object.entries(delta) as Array<[keyof BalanceDelta, number]>) sum[column] += value;
    sums.set(entry.workspace_id, sum);
  }
  const deltas = [...sums].map(([workspace_id, sum]) => ({ workspace_id, ...sum }));
  const keyReturns = postings.flatMap((p) =>
    p.keyReturn ? [{ key_id: p.keyReturn.keyId, period_start: p.keyReturn.periodStart, credits: p.keyReturn.credits }] : [],
  );
  const keys =
    keyReturns.length === 0
      ? sql``
      : sql`, keys as (
          update api_key_spend s set spent = greatest(0, s.spent - v.credits)
          from (select key_id, period_start, sum(credits) as credits
                from ${jsonRows(keyReturns, 'key_id text, period_start date, credits bigint')} as r group by key_id, period_start) as v
          where s.key_id = v.key_id and s.period_start = v.period_start
        )`;
  // The ledger insert (and the keys' spend) run as part of the balance update (a data-modifying WITH always runs).
  await sql`
    with ledger as (
      insert into credit_ledger
        (workspace_id, entry_type, credits, plan_credits, promo_credits, purchased_credits, units, reservation_id, job_id, period_start, note)
      select l.workspace_id, ${entryType}, l.credits, l.plan_credits, l.promo_credits, l.purchased_credits, l.units, l.reservation_id, l.job_id,
             l.period_start, l.note
      from ${jsonRows(
        postings.map((p) => p.entry),
        'workspace_id text, credits bigint, plan_credits bigint, promo_credits bigint, purchased_credits bigint, units bigint, reservation_id text, job_id text, period_start date, note text',
      )} as l
    )${keys}
    update credit_balances b
    set ${sql.join(DELTA_COLUMNS.map((c) => sql`${sql.ref(c)} = ${sql.ref(`b.${c}`)} + ${sql.ref(`v.${c}`)}`))},
        updated_at = ${now}
    from ${jsonRows(deltas, `workspace_id text, ${DELTA_COLUMNS.map((c) => `${c} bigint`).join(', ')}`)} as v
    where b.workspace_id = v.workspace_id
  `.execute(tx);
  return sums;
}

/** A locked balance with a posting's summed change applied: the row as the posting left it. */
export function applyDelta(balance: Balance, delta: BalanceDelta | undefined): Balance {
  if (!delta) return balance;
  const after = { ...balance };
  for (const column of DELTA_COLUMNS) after[column] += delta[column];
  return after;
}

/**
 * Books claimed settlements against their workspaces' balance rows, locked by the caller
 * (balanceLock) and rolled over here first (rollOver: a new month's allowance, expired
 * promotional credits): one statement inserts every ledger entry and applies each workspace's
 * summed change to its balance. Per job, the charge is drawn from the reservation's
 * parts (drawInOrder) and the rest returned (noted in the entry). Ledger entries follow the
 * order of `settlements`. Returns the credits charged per job, and the balances as the settlements
 * left them (by workspace).
 */
export async function bookSettlements(
  tx: Tx,
  now: Date,
  settlements: readonly Settlement[],
  locked: readonly Balance[],
): Promise<{ charged: Map<string, number>; after: Map<string, Balance> }> {
  const quotas = [...new Map(settlements.map((s) => [s.reservation.workspace_id, s.reservation.monthly_quota]))].map(
    ([id, monthly_quota]) => ({ id, monthly_quota }),
  );
  const balances = await rollOver(tx, locked, quotas, now);
  const charged = new Map<string, number>();
  const postings = settlements.map(({ reservation: r, units }): Posting => {
    const balance = balances.get(r.workspace_id);
    if (!balance) throw new Error(`the balance of workspace ${r.workspace_id} is not locked`);
    const held: Buckets = { plan: r.plan_amount, promo: r.promo_amount, purchased: r.purchased_amount };
    const reservedTotal = held.plan + held.promo + held.purchased;
    const charge = r.settled_credits ?? 0;
    const drawn = drawInOrder(charge, held);
    charged.set(r.job_id, charge);
    const month = monthReturn(r, balance, reservedTotal - charge);
    return {
      keyReturn: month.keyReturn,
      entry: {
        workspace_id: r.workspace_id,
        credits: charge,
        plan_credits: drawn.plan,
        promo_credits: drawn.promo,
        purchased_credits: drawn.purchased,
        units,
        reservation_id: r.id,
        job_id: r.job_id,
        period_start: balance.period_start,
        note: charge < reservedTotal ? `released ${reservedTotal - charge} unused credits` : null,
      },
      // The whole reservation leaves the reserved totals; what was drawn is spent, the rest is free again.
      delta: {
        plan_reserved: -held.plan,
        promo_reserved: -held.promo,
        purchased_reserved: -held.purchased,
        units_reserved: -r.units,
        plan_used: drawn.plan,
        promo_balance: -drawn.promo,
        purchased_balance: -drawn.purchased,
        period_promo_spent: drawn.promo,
        period_purchased_spent: drawn.purchased,
        units_used: units,
        lifetime_spent: charge,
        month_spent: month.month_spent,
      },
    };
  });
  const sums = await post(tx, now, 'settle', postings);
  recordCreditsSettled([...charged.values()].reduce((sum, charge) => sum + charge, 0));
  const after = new Map([...balances].map(([id, balance]) => [id, applyDelta(balance, sums.get(id))]));
  return { charged, after };
}
