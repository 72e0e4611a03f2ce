import { sql } from 'kysely';
import type { Db } from '@sdx/db';

/**
 * The money audit every drill ends with, over one workspace once its jobs are terminal:
 * every job has exactly one reservation, closed exactly once (settled if it completed,
 * released otherwise) by exactly one ledger entry; what the ledger charged each job is what the
 * job reports; and the balance row agrees with the ledger, nothing left reserved.
 */
export interface LedgerAudit {
  jobs: number;
  byStatus: Record<string, number>;
  /** Jobs not terminal (queued or running). */
  unfinished: number;
  /** Jobs without exactly one reservation. */
  reservationMismatches: number;
  /** Reservations still held for a terminal job. */
  heldForTerminal: number;
  /** Jobs closed by more than one ledger entry (a settlement and a release, or two of either). */
  doubleClosed: number;
  /** Terminal jobs with no closing ledger entry. */
  unclosed: number;
  /** Jobs whose billed_credits differ from their settlement entry. */
  chargeMismatches: number;
  /** Balance row minus ledger: lifetime_spent vs settlements, reserved totals vs held reservations. */
  balanceDrift: number;
  ok: boolean;
}

export async function auditLedger(db: Db, workspaceId: string): Promise<LedgerAudit> {
  const statuses = await sql<{ status: string; n: number }>`
    select status, count(*)::int as n from jobs where workspace_id = ${workspaceId} group by status`.execute(db);
  const byStatus = Object.fromEntries(statuses.rows.map((r) => [r.status, r.n]));
  const jobs = statuses.rows.reduce((n, r) => n + r.n, 0);
  const unfinished = (byStatus.queued ?? 0) + (byStatus.running ?? 0);

  const perJob = await sql<{
    reservation_mismatches: number;
    held_for_terminal: number;
    double_closed: number;
    unclosed: number;
    charge_mismatches: number;
  }>`
    with r as (
      select job_id, count(*)::int as n, bool_or(status = 'held') as held from credit_reservations
      where workspace_id = ${workspaceId} group by job_id
    ), l as (
      select job_id,
             count(*) filter (where entry_type in ('settle', 'release'))::int as closings,
             coalesce(sum(credits) filter (where entry_type = 'settle'), 0)::bigint as charged
      from credit_ledger where workspace_id = ${workspaceId} and job_id is not null group by job_id
    )
    select
      count(*) filter (where coalesce(r.n, 0) <> 1)::int as reservation_mismatches,
      count(*) filter (where j.status in ('completed', 'failed', 'cancelled') and r.held)::int as held_for_terminal,
      count(*) filter (where coalesce(l.closings, 0) > 1)::int as double_closed,
      count(*) filter (where j.status in ('completed', 'failed', 'cancelled') and coalesce(l.closings, 0) = 0)::int as unclosed,
      count(*) filter (where j.status in ('completed', 'failed', 'cancelled') and coalesce(l.charged, 0) <> j.billed_credits)::int as charge_mismatches
    from jobs j left join r on r.job_id = j.id left join l on l.job_id = j.id
    where j.workspace_id = ${workspaceId}`.execute(db);
  const row = perJob.rows[0]!;

  const balance = await sql<{ drift: number }>`
    select (
      abs(b.lifetime_spent - coalesce((select sum(credits) from credit_ledger where workspace_id = b.workspace_id and entry_type = 'settle'), 0))
      + abs((b.plan_reserved + b.promo_reserved + b.purchased_reserved)
            - coalesce((select sum(plan_amount + promo_amount + purchased_amount) from credit_reservations where workspace_id = b.workspace_id and status = 'held'), 0))
    )::bigint as drift
    from credit_balances b where b.workspace_id = ${workspaceId}`.execute(db);
  const balanceDrift = Number(balance.rows[0]?.drift ?? 0);

  const audit = {
    jobs,
    byStatus,
    unfinished,
    reservationMismatches: row.reservation_mismatches,
    heldForTerminal: row.held_for_terminal,
    doubleClosed: row.double_closed,
    unclosed: row.unclosed,
    chargeMismatches: row.charge_mismatches,
    balanceDrift,
  };
  const ok = Object.entries(audit).every(([key, value]) => key === 'jobs' || key === 'byStatus' || value === 0);
  return { ...audit, ok };
}
