import { sql } from 'kysely';
import type { Executor, WorkspaceRow } from '@sdx/db';
import type { DailyUsage, UsageResponse } from '@sdx/contract';
import { availableOf, balanceAsOf, promoActive } from './balances';

/** Reads of the money module (credits/): usage now, by day, and ledger totals. */

// ---------------------------------------------------------------------------------------------
// Reads

/** GET /v1/usage/current's body (UsageResponse of openapi.yaml). */
export type Usage = UsageResponse;

/** GET /v1/usage/current: every field from the balance row as of `now`, without writing. */
export async function getUsage(db: Executor, workspace: WorkspaceRow, now: Date): Promise<Usage> {
  const stored = await db.selectFrom('credit_balances').selectAll().where('workspace_id', '=', workspace.id).executeTakeFirstOrThrow();
  const b = balanceAsOf(stored, now);
  const available = availableOf(b, workspace, now);
  const promoLive = promoActive(b, now);
  return {
    period_start: b.period_start,
    credit_limit: workspace.monthly_quota,
    units_used: b.units_used,
    units_reserved: b.units_reserved,
    units_remaining: available.total,
    credits_used: b.plan_used + b.period_promo_spent + b.period_purchased_spent,
    credits_reserved: b.plan_reserved + b.promo_reserved + b.purchased_reserved,
    credits_remaining: available.total,
    purchased_credits: b.purchased_balance,
    promotional_credits: promoLive ? b.promo_balance : b.promo_reserved,
    promotional_expires_at: b.promo_expires_at ? b.promo_expires_at.toISOString() : null,
    lifetime_purchased: b.lifetime_purchased,
    lifetime_spent: b.lifetime_spent,
  };
}

/** The credits of GET /v1/account (`credits`) and the month's spend of GET /v1/billing, from the balance row as of `now`. */
export async function getCredits(db: Executor, workspace: WorkspaceRow, now: Date) {
  const stored = await db.selectFrom('credit_balances').selectAll().where('workspace_id', '=', workspace.id).executeTakeFirstOrThrow();
  const b = balanceAsOf(stored, now);
  return {
    available_credits: availableOf(b, workspace, now).total,
    purchased_credits: b.purchased_balance,
    lifetime_purchased: b.lifetime_purchased,
    month_spent_credits: b.month_spent,
  };
}

/** Sum of the ledger for a workspace, for audits and tests of the balance row. */
export async function ledgerTotals(db: Executor, workspaceId: string): Promise<{ reserved: number; settled: number; released: number }> {
  const rows = await db
    .selectFrom('credit_ledger')
    .select(['entry_type', sql<number>`coalesce(sum(credits), 0)::bigint`.as('total')])
    .where('workspace_id', '=', workspaceId)
    .groupBy('entry_type')
    .execute();
  const get = (t: string) => Number(rows.find((r) => r.entry_type === t)?.total ?? 0);
  return { reserved: -get('reserve'), settled: get('settle'), released: get('release') };
}

/**
 * GET /v1/usage/daily: the last `days` UTC days up to today's, oldest first, days without
 * activity as zeros. From the ledger: credits_used is what settlements charged, results what
 * they delivered; credits_released is what went back to the balance: whole reservations of
 * jobs that failed or were cancelled, and the unused part of settled ones. Jobs completed and
 * failed are counted by the day they finished.
 */
export async function getDailyUsage(db: Executor, workspaceId: string, now: Date, days: number): Promise<DailyUsage[]> {
  const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const first = new Date(today.getTime() - (days - 1) * 86_400_000);
  const { rows } = await sql<DailyUsage>`
    with days as (
      select d::date as day from generate_series(${first.toISOString().slice(0, 10)}::date, ${today.toISOString().slice(0, 10)}::date, interval '1 day') as d
    ), ledger as (
      select (l.created_at at time zone 'UTC')::date as day,
             sum(l.credits) filter (where l.entry_type = 'settle') as used,
             sum(case when l.entry_type = 'release' then l.credits
                      else r.plan_amount + r.promo_amount + r.purchased_amount - l.credits end)
               filter (where l.entry_type in ('settle', 'release')) as released,
             sum(l.units) filter (where l.entry_type = 'settle') as results
      from credit_ledger l
      left join credit_reservations r on r.id = l.reservation_id
      where l.workspace_id = ${workspaceId} and l.created_at >= ${first}
      group by 1
    ), ended as (
      select (j.finished_at at time zone 'UTC')::date as day,
             count(*) filter (where j.status = 'completed') as completed,
             count(*) filter (where j.status = 'failed') as failed
      from jobs j
      where j.workspace_id = ${workspaceId} and j.status in ('completed', 'failed') and j.finished_at >= ${first}
      group by 1
    )
    select to_char(d.day, 'YYYY-MM-DD') as date,
           coalesce(l.used, 0)::bigint as credits_used,
           coalesce(l.released, 0)::bigint as credits_released,
           coalesce(l.results, 0)::bigint as results,
           coalesce(e.completed, 0)::bigint as jobs_completed,
           coalesce(e.failed, 0)::bigint as jobs_failed
    from days d
    left join ledger l on l.day = d.day
    left join ended e on e.day = d.day
    order by d.day
  `.execute(db);
  return rows;
}
