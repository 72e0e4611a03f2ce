import { sql } from 'kysely';
import type { Db } from '@sdx/db';

export interface LedgerReport {
  jobs: number;
  completed: number;
  failed: number;
  cancelled: number;
  active: number;
  /** Jobs served from the cache: no reservation, nothing billed, so not checked. */
  cached: number;
  /** Credits billed in all (settled). */
  billed: number;
  /** Each broken rule, with the job or workspace it concerns; empty when the ledger is exact. */
  problems: string[];
}

/**
 * Checks the money of every job in the database against its state, after a drill:
 * - each job has one reservation and one reserve entry;
 * - a completed job's reservation is settled at exactly its billed credits, with one settle
 *   entry and no release (billed once);
 * - a failed or cancelled job's is released, with one release entry, nothing settled or billed;
 * - a queued or running job's is still held, with neither;
 * - each workspace's reserved totals equal its held reservations, and its lifetime spend the
 *   sum of its settlements.
 * Cached jobs (reusing a result, billed nothing) have no reservation and are only counted.
 * The one money audit of the drills and the tests that break things.
 */
export async function checkLedger(db: Db): Promise<LedgerReport> {
  const { rows } = await sql<{
    id: string;
    status: string;
    billed_credits: number;
    reservations: number;
    reservation_status: string | null;
    settled_credits: number | null;
    reserves: number;
    settles: number;
    releases: number;
  }>`
    select j.id, j.status, j.billed_credits,
           (select count(*)::int from credit_reservations r where r.job_id = j.id) as reservations,
           (select r.status from credit_reservations r where r.job_id = j.id limit 1) as reservation_status,
           (select r.settled_credits from credit_reservations r where r.job_id = j.id limit 1) as settled_credits,
           (select count(*)::int from credit_ledger l where l.job_id = j.id and l.entry_type = 'reserve') as reserves,
           (select count(*)::int from credit_ledger l where l.job_id = j.id and l.entry_type = 'settle') as settles,
           (select count(*)::int from credit_ledger l where l.job_id = j.id and l.entry_type = 'release') as releases
    from jobs j
    where not j.cached
  `.execute(db);
  const cached = await sql<{ n: number }>`select count(*)::int as n from jobs where cached`.execute(db);
  const report: LedgerReport = { jobs: rows.length, completed: 0, failed: 0, cancelled: 0, active: 0, cached: cached.rows[0]!.n, billed: 0, problems: [] };
  for (const job of rows) {
    const problem = (what: string) => report.problems.push(`${job.id} (${job.status}): ${what}`);
    if (job.reservations !== 1) problem(`${job.reservations} reservations`);
    if (job.reserves !== 1) problem(`${job.reserves} reserve entries`);
    if (job.status === 'completed') {
      report.completed += 1;
      report.billed += job.billed_credits;
      if (job.reservation_status !== 'settled') problem(`reservation ${job.reservation_status}`);
      if (job.settles !== 1 || job.releases !== 0) problem(`${job.settles} settle and ${job.releases} release entries`);
      if (Number(job.settled_credits) !== job.billed_credits) problem(`settled ${job.settled_credits}, billed ${job.billed_credits}`);
    } else if (job.status === 'failed' || job.status === 'cancelled') {
      report[job.status] += 1;
      if (job.reservation_status !== 'released') problem(`reservation ${job.reservation_status}`);
      if (job.settles !== 0 || job.releases !== 1) problem(`${job.settles} settle and ${job.releases} release entries`);
      if (job.billed_credits !== 0) problem(`billed ${job.billed_credits}`);
    } else {
      report.active += 1;
      if (job.reservation_status !== 'held') problem(`reservation ${job.reservation_status}`);
      if (job.settles !== 0 || job.releases !== 0) problem(`${job.settles} settle and ${job.releases} release entries`);
    }
  }
  const { rows: balances } = await sql<{ workspace_id: string; reserved: number; held: number; spent: number; settled: number }>`
    select b.workspace_id,
           (b.plan_reserved + b.promo_reserved + b.purchased_reserved)::int as reserved,
           coalesce((select sum(r.plan_amount + r.promo_amount + r.purchased_amount) from credit_reservations r
                     where r.workspace_id = b.workspace_id and r.status = 'held'), 0)::int as held,
           b.lifetime_spent::int as spent,
           coalesce((select sum(l.credits) from credit_ledger l where l.workspace_id = b.workspace_id and l.entry_type = 'settle'), 0)::int as settled
    from credit_balances b
    where b.period_start = (select max(period_start) from credit_balances c where c.workspace_id = b.workspace_id)
  `.execute(db);
  for (const b of balances) {
    if (b.reserved !== b.held) report.problems.push(`workspace ${b.workspace_id}: reserved ${b.reserved}, held reservations ${b.held}`);
    if (b.spent !== b.settled) report.problems.push(`workspace ${b.workspace_id}: lifetime spent ${b.spent}, settled ${b.settled}`);
  }
  return report;
}
