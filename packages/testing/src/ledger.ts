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
 *   sum of its settlements;
 * - the month's spend (of the workspace, and of each key) equals what the period's reservations
 *   hold or settled;
 * - purchased credits equal their grants, purchases and refunds less what settlements drew from
 *   them, never below what is reserved of them; lifetime purchases equal grants and purchases;
 * - each paid payment has exactly one purchase entry of its credits, every other none, and its
 *   refund entries remove what it reversed less its shortfall.
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
  const report: LedgerReport = {
    jobs: rows.length,
    completed: 0,
    failed: 0,
    cancelled: 0,
    active: 0,
    cached: cached.rows[0].n,
    billed: 0,
    problems: [],
  };
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
  report.problems.push(...(await checkSpendAndPurchases(db)));
  return report;
}

/** What a period's reservations count in its month's spend: held ones their amount, settled ones their charge. */
const COUNTED = sql`case r.status when 'held' then r.plan_amount + r.promo_amount + r.purchased_amount when 'settled' then coalesce(r.settled_credits, 0) else 0 end`;

async function checkSpendAndPurchases(db: Db): Promise<string[]> {
  const problems: string[] = [];
  const { rows: months } = await sql<{ workspace_id: string; month_spent: number; counted: number }>`
    select b.workspace_id, b.month_spent::bigint as month_spent,
           coalesce((select sum(${COUNTED}) from credit_reservations r
                     where r.workspace_id = b.workspace_id
                       and (r.created_at at time zone 'UTC')::date >= b.period_start
                       and (r.created_at at time zone 'UTC')::date < (b.period_start + interval '1 month')::date), 0)::bigint as counted
    from credit_balances b
  `.execute(db);
  for (const m of months) {
    if (Number(m.month_spent) !== Number(m.counted))
      problems.push(`workspace ${m.workspace_id}: month spent ${m.month_spent}, its reservations count ${m.counted}`);
  }
  const { rows: keys } = await sql<{ key_id: string; spent: number; counted: number }>`
    select s.key_id, s.spent::bigint as spent,
           coalesce((select sum(${COUNTED}) from credit_reservations r
                     where r.api_key_id = s.key_id
                       and (r.created_at at time zone 'UTC')::date >= s.period_start
                       and (r.created_at at time zone 'UTC')::date < (s.period_start + interval '1 month')::date), 0)::bigint as counted
    from api_key_spend s
  `.execute(db);
  for (const k of keys) {
    if (Number(k.spent) !== Number(k.counted))
      problems.push(`key ${k.key_id}: month spent ${k.spent}, its reservations count ${k.counted}`);
  }
  const { rows: purchased } = await sql<{
    workspace_id: string;
    balance: number;
    reserved: number;
    lifetime: number;
    added: number;
    drawn: number;
    granted: number;
  }>`
    select b.workspace_id, b.purchased_balance::bigint as balance, b.purchased_reserved::bigint as reserved, b.lifetime_purchased::bigint as lifetime,
           coalesce((select sum(l.purchased_credits) from credit_ledger l where l.workspace_id = b.workspace_id and l.entry_type in ('grant', 'purchase', 'refund')), 0)::bigint as added,
           coalesce((select sum(l.purchased_credits) from credit_ledger l where l.workspace_id = b.workspace_id and l.entry_type = 'settle'), 0)::bigint as drawn,
           coalesce((select sum(l.purchased_credits) from credit_ledger l where l.workspace_id = b.workspace_id and l.entry_type in ('grant', 'purchase')), 0)::bigint as granted
    from credit_balances b
  `.execute(db);
  for (const p of purchased) {
    const [balance, reserved] = [Number(p.balance), Number(p.reserved)];
    if (balance !== Number(p.added) - Number(p.drawn))
      problems.push(`workspace ${p.workspace_id}: purchased ${balance}, ledger ${Number(p.added) - Number(p.drawn)}`);
    if (balance < reserved || reserved < 0)
      problems.push(`workspace ${p.workspace_id}: purchased ${balance} below its reserved ${reserved}`);
    if (Number(p.lifetime) !== Number(p.granted))
      problems.push(`workspace ${p.workspace_id}: lifetime purchased ${p.lifetime}, grants and purchases ${p.granted}`);
  }
  const { rows: payments } = await sql<{
    id: string;
    status: string;
    credits: number;
    purchases: number;
    purchased: number;
    removed: number;
    refunded: number;
    shortfall: number;
  }>`
    select p.id, p.status, p.credits::bigint as credits,
           (select count(*) from credit_ledger l where l.payment_id = p.id and l.entry_type = 'purchase')::int as purchases,
           coalesce((select sum(l.credits) from credit_ledger l where l.payment_id = p.id and l.entry_type = 'purchase'), 0)::bigint as purchased,
           coalesce((select -sum(l.credits) from credit_ledger l where l.payment_id = p.id and l.entry_type = 'refund'), 0)::bigint as removed,
           p.refunded_credits::bigint as refunded, p.refund_shortfall_credits::bigint as shortfall
    from billing_payments p
  `.execute(db);
  for (const p of payments) {
    const granted = ['paid', 'partially_refunded', 'refunded'].includes(p.status);
    if (p.purchases !== (granted ? 1 : 0)) problems.push(`payment ${p.id} (${p.status}): ${p.purchases} purchase entries`);
    if (granted && Number(p.purchased) !== Number(p.credits))
      problems.push(`payment ${p.id}: purchased ${p.purchased}, its pack ${p.credits}`);
    if (Number(p.removed) !== Number(p.refunded) - Number(p.shortfall))
      problems.push(`payment ${p.id}: refunds removed ${p.removed}, reversed ${p.refunded} less shortfall ${p.shortfall}`);
  }
  return problems;
}
