import { type Insertable, type RawBuilder, sql } from 'kysely';
import { type CreditBalanceRow, type CreditLedgerTable, type CreditReservationsTable, type Executor, jsonRows, type ReservationRow, type Tx, type WorkspaceRow } from '@sdx/db';
import type { DailyUsage, UsageResponse } from '@sdx/contract';
import { recordCreditsSettled } from '@sdx/metrics';
import { ApiError } from '../errors';
import { newId } from '../ids';
import { periodStartOf } from '../time';

/**
 * The money module: every write to credit balances, reservations and the ledger is here.
 *
 * Credits are a ledger. Every grant, reservation, release, settlement, monthly allowance and
 * expiry is a row in credit_ledger; the per-workspace balance row changes in the same
 * transaction, under its row lock, so concurrent writers serialise per workspace and can never
 * overdraw. Several workspaces' rows are always locked in workspace_id order.
 *
 * Buckets: the monthly plan allowance (renewed on the first day of the UTC month), promotional
 * credits (expire at promo_expires_at) and purchased credits (never expire). Reserving and
 * spending draw from plan first, then promotional, then purchased (drawInOrder).
 *
 * Lifecycle of a job's credits: reserved at admission (its maximum cost), then exactly once
 * either settled (the charge drawn from the reservation, the rest returned) or released whole.
 */

export type Balance = CreditBalanceRow;

/** Credits per bucket. */
export interface Buckets {
  plan: number;
  promo: number;
  purchased: number;
}

export interface Available extends Buckets {
  total: number;
}

/**
 * The bucket rule, written once: `amount` drawn from plan, then promotional, then purchased,
 * each up to its limit in `from` (the last bucket takes the rest). Reservations draw from what
 * is available; a settlement draws its charge from what the reservation holds.
 */
export function drawInOrder(amount: number, from: Buckets): Buckets {
  const plan = Math.min(amount, from.plan);
  const promo = Math.min(amount - plan, from.promo);
  return { plan, promo, purchased: amount - plan - promo };
}

function promoActive(balance: Balance, now: Date): boolean {
  return balance.promo_expires_at === null || balance.promo_expires_at.getTime() > now.getTime();
}

/**
 * The balance as of `now`, without writing: a new month resets the plan usage; expired
 * promotional credits are gone. (rollOver records the same change on a locked row.)
 */
export function balanceAsOf(balance: Balance, now: Date): Balance {
  return rolled(balance, now);
}

function rolled(balance: Balance, now: Date): Balance {
  const period = periodStartOf(now);
  let b = balance;
  if (b.period_start < period) {
    b = { ...b, period_start: period, plan_used: 0, units_used: 0, period_promo_spent: 0, period_purchased_spent: 0 };
  }
  if (!promoActive(b, now) && b.promo_balance > b.promo_reserved) {
    b = { ...b, promo_balance: b.promo_reserved };
  }
  return b;
}

export function availableOf(balance: Balance, workspace: Pick<WorkspaceRow, 'monthly_quota'>, now: Date): Available {
  const plan = Math.max(0, workspace.monthly_quota - balance.plan_used - balance.plan_reserved);
  const promo = promoActive(balance, now) ? balance.promo_balance - balance.promo_reserved : 0;
  const purchased = balance.purchased_balance - balance.purchased_reserved;
  return { plan, promo, purchased, total: plan + promo + purchased };
}

export function insufficientCredits(balance: Balance, available: Available, required: number): ApiError {
  const reserved = balance.plan_reserved + balance.promo_reserved + balance.purchased_reserved;
  return new ApiError('insufficient_credits', `This request needs ${required} credits; ${available.total} are available.`, {
    available: available.total,
    reserved,
    required,
  });
}

// ---------------------------------------------------------------------------------------------
// Balance rows: opening, locking, rollover and expiry

export async function openBalance(tx: Tx, workspace: WorkspaceRow, now: Date): Promise<void> {
  const period = periodStartOf(now);
  await tx.insertInto('credit_balances').values({ workspace_id: workspace.id, period_start: period }).execute();
  await tx.insertInto('credit_ledger').values(allowanceEntry(workspace.id, workspace.monthly_quota, period)).execute();
}

/**
 * Locks the balance rows of `workspaces` for the rest of the transaction and applies a month
 * rollover or promotional expiry, each recorded in the ledger. Returns them by workspace.
 */
export async function lockBalances(tx: Tx, workspaces: ReadonlyArray<Pick<WorkspaceRow, 'id' | 'monthly_quota'>>, now: Date): Promise<Map<string, Balance>> {
  if (workspaces.length === 0) return new Map();
  return rollOver(tx, await balanceLock(tx, workspaces.map((w) => w.id)).execute(), workspaces, now);
}

/** lockBalances for one workspace. */
export async function lockBalance(tx: Tx, workspaceId: string, now: Date, quota: number): Promise<Balance> {
  const balance = (await lockBalances(tx, [{ id: workspaceId, monthly_quota: quota }], now)).get(workspaceId);
  if (!balance) throw new Error(`workspace ${workspaceId} has no balance row`);
  return balance;
}

/**
 * The locking statement of lockBalances, built and not run, for a caller that sends it together
 * with other statements; rollOver then finishes the lock on the rows it returned.
 */
export function balanceLock(tx: Tx, workspaceIds: readonly string[]) {
  return tx.selectFrom('credit_balances').selectAll().where('workspace_id', 'in', [...new Set(workspaceIds)]).orderBy('workspace_id').forUpdate();
}

/** Records the month rollover or promotional expiry of locked balance rows (rare: at most monthly). */
export async function rollOver(
  tx: Tx,
  rows: readonly Balance[],
  workspaces: ReadonlyArray<Pick<WorkspaceRow, 'id' | 'monthly_quota'>>,
  now: Date,
): Promise<Map<string, Balance>> {
  const quotas = new Map(workspaces.map((w) => [w.id, w.monthly_quota]));
  const locked = new Map<string, Balance>();
  for (const row of rows) {
    const quota = quotas.get(row.workspace_id);
    if (quota !== undefined) locked.set(row.workspace_id, await applyRollover(tx, row, now, quota));
  }
  return locked;
}

function allowanceEntry(workspaceId: string, quota: number, period: string): Insertable<CreditLedgerTable> {
  return {
    workspace_id: workspaceId,
    entry_type: 'plan_allowance',
    bucket: 'plan',
    credits: quota,
    plan_credits: quota,
    period_start: period,
    note: 'monthly plan allowance',
  };
}

async function applyRollover(tx: Tx, current: Balance, now: Date, quota: number): Promise<Balance> {
  const workspaceId = current.workspace_id;
  const next = rolled(current, now);
  if (next === current) return current;
  if (next.period_start !== current.period_start) {
    await tx.insertInto('credit_ledger').values(allowanceEntry(workspaceId, quota, next.period_start)).execute();
  }
  if (next.promo_balance !== current.promo_balance) {
    const expired = current.promo_balance - next.promo_balance;
    await tx
      .insertInto('credit_ledger')
      .values({
        workspace_id: workspaceId,
        entry_type: 'expire',
        bucket: 'promotional',
        credits: -expired,
        promo_credits: -expired,
        period_start: next.period_start,
        note: 'promotional credits expired',
      })
      .execute();
  }
  await tx
    .updateTable('credit_balances')
    .set({
      period_start: next.period_start,
      plan_used: next.plan_used,
      units_used: next.units_used,
      period_promo_spent: next.period_promo_spent,
      period_purchased_spent: next.period_purchased_spent,
      promo_balance: next.promo_balance,
      updated_at: now,
    })
    .where('workspace_id', '=', workspaceId)
    .execute();
  return next;
}

// ---------------------------------------------------------------------------------------------
// Reserve

export interface ReserveRequest {
  jobId: string;
  credits: number;
  units: number;
}

export interface PlannedReservation {
  reservation: Insertable<CreditReservationsTable>;
  ledger: Insertable<CreditLedgerTable>;
}

/**
 * The reservation of one job's maximum cost against a locked balance, without writing: the rows
 * to insert and the balance after it. Throws 402 when it does not fit. Several plans can follow
 * each other on the returned balance (a batch, a group of submissions) and be written at once
 * (withReservations).
 */
export function planReservation(
  workspace: Pick<WorkspaceRow, 'id' | 'monthly_quota'>,
  balance: Balance,
  now: Date,
  request: ReserveRequest,
): { planned: PlannedReservation; balance: Balance } {
  const available = availableOf(balance, workspace, now);
  if (request.credits > available.total) throw insufficientCredits(balance, available, request.credits);
  const parts = drawInOrder(request.credits, available);
  const reservationId = newId('res');
  return {
    planned: {
      reservation: {
        id: reservationId,
        workspace_id: workspace.id,
        job_id: request.jobId,
        plan_amount: parts.plan,
        promo_amount: parts.promo,
        purchased_amount: parts.purchased,
        units: request.units,
        status: 'held',
      },
      ledger: {
        workspace_id: workspace.id,
        entry_type: 'reserve',
        credits: -request.credits,
        plan_credits: -parts.plan,
        promo_credits: -parts.promo,
        purchased_credits: -parts.purchased,
        units: request.units,
        reservation_id: reservationId,
        job_id: request.jobId,
        period_start: balance.period_start,
      },
    },
    balance: {
      ...balance,
      plan_reserved: balance.plan_reserved + parts.plan,
      promo_reserved: balance.promo_reserved + parts.promo,
      purchased_reserved: balance.purchased_reserved + parts.purchased,
      units_reserved: balance.units_reserved + request.units,
    },
  };
}

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

/** A reservation just moved from held to settled, with the charge it settled at and its workspace's plan quota. */
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

/** A change to one balance row, summed over the entries that explain it (each field added as is). */
interface BalanceDelta {
  plan_reserved: number;
  promo_reserved: number;
  purchased_reserved: number;
  units_reserved: number;
  plan_used: number;
  promo_balance: number;
  purchased_balance: number;
  period_promo_spent: number;
  period_purchased_spent: number;
  units_used: number;
  lifetime_spent: number;
}

const NO_CHANGE: BalanceDelta = {
  plan_reserved: 0,
  promo_reserved: 0,
  purchased_reserved: 0,
  units_reserved: 0,
  plan_used: 0,
  promo_balance: 0,
  purchased_balance: 0,
  period_promo_spent: 0,
  period_purchased_spent: 0,
  units_used: 0,
  lifetime_spent: 0,
};

/** A ledger entry of a settlement or release, with the balance change it explains. */
interface Posting {
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
}

/**
 * Writes postings in one statement: their ledger entries (in order), and each workspace's
 * balance changed by the sum of its postings' deltas. The balance rows must be locked.
 */
async function post(tx: Tx, now: Date, entryType: 'settle' | 'release', postings: readonly Posting[]): Promise<void> {
  if (postings.length === 0) return;
  const sums = new Map<string, BalanceDelta>();
  for (const { entry, delta } of postings) {
    const sum = sums.get(entry.workspace_id) ?? { ...NO_CHANGE };
    for (const [column, value] of Object.entries(delta) as Array<[keyof BalanceDelta, number]>) sum[column] += value;
    sums.set(entry.workspace_id, sum);
  }
  const deltas = [...sums].map(([workspace_id, sum]) => ({ workspace_id, ...sum }));
  // The ledger insert runs as part of the balance update (a data-modifying WITH always runs).
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
    )
    update credit_balances b
    set plan_reserved = b.plan_reserved + v.plan_reserved,
        promo_reserved = b.promo_reserved + v.promo_reserved,
        purchased_reserved = b.purchased_reserved + v.purchased_reserved,
        units_reserved = b.units_reserved + v.units_reserved,
        plan_used = b.plan_used + v.plan_used,
        promo_balance = b.promo_balance + v.promo_balance,
        purchased_balance = b.purchased_balance + v.purchased_balance,
        period_promo_spent = b.period_promo_spent + v.period_promo_spent,
        period_purchased_spent = b.period_purchased_spent + v.period_purchased_spent,
        units_used = b.units_used + v.units_used,
        lifetime_spent = b.lifetime_spent + v.lifetime_spent,
        updated_at = ${now}
    from ${jsonRows(
      deltas,
      'workspace_id text, plan_reserved bigint, promo_reserved bigint, purchased_reserved bigint, units_reserved bigint, plan_used bigint, promo_balance bigint, purchased_balance bigint, period_promo_spent bigint, period_purchased_spent bigint, units_used bigint, lifetime_spent bigint',
    )} as v
    where b.workspace_id = v.workspace_id
  `.execute(tx);
}

/**
 * Books claimed settlements against their workspaces' locked balances (lockBalances, or
 * balanceLock + rollOver): one statement inserts every ledger entry and applies each
 * workspace's summed change to its balance. Per job, the charge is drawn from the reservation's
 * parts (drawInOrder) and the rest returned (noted in the entry). Ledger entries follow the
 * order of `settlements`. Returns the credits charged per job.
 */
export async function bookSettlements(tx: Tx, now: Date, settlements: readonly Settlement[], balances: ReadonlyMap<string, Balance>): Promise<Map<string, number>> {
  const charged = new Map<string, number>();
  const postings = settlements.map(({ reservation: r, units }): Posting => {
    const balance = balances.get(r.workspace_id);
    if (!balance) throw new Error(`the balance of workspace ${r.workspace_id} is not locked`);
    const held: Buckets = { plan: r.plan_amount, promo: r.promo_amount, purchased: r.purchased_amount };
    const reservedTotal = held.plan + held.promo + held.purchased;
    const charge = r.settled_credits ?? 0;
    const drawn = drawInOrder(charge, held);
    charged.set(r.job_id, charge);
    return {
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
      },
    };
  });
  await post(tx, now, 'settle', postings);
  recordCreditsSettled([...charged.values()].reduce((sum, charge) => sum + charge, 0));
  return charged;
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
  const workspaces = [...new Map(settlements.map((s) => [s.reservation.workspace_id, s.reservation.monthly_quota]))].map(([id, monthly_quota]) => ({ id, monthly_quota }));
  return bookSettlements(tx, now, settlements, await lockBalances(tx, workspaces, now));
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

// ---------------------------------------------------------------------------------------------
// Grant

export interface GrantRequest {
  credits: number;
  kind: 'purchased' | 'promotional';
  expiresAt?: Date | null;
  note?: string;
}

/** Adds purchased or promotional credits; they can be spent at once. */
export async function grantCredits(tx: Tx, workspace: WorkspaceRow, now: Date, grant: GrantRequest): Promise<void> {
  if (!Number.isInteger(grant.credits) || grant.credits <= 0) throw new Error('credits must be a positive integer');
  const balance = await lockBalance(tx, workspace.id, now, workspace.monthly_quota);
  const promo = grant.kind === 'promotional';
  await tx
    .insertInto('credit_ledger')
    .values({
      workspace_id: workspace.id,
      entry_type: 'grant',
      bucket: grant.kind,
      credits: grant.credits,
      promo_credits: promo ? grant.credits : 0,
      purchased_credits: promo ? 0 : grant.credits,
      period_start: balance.period_start,
      note: grant.note ?? null,
    })
    .execute();
  await tx
    .updateTable('credit_balances')
    .set((eb) =>
      promo
        ? {
            promo_balance: eb('promo_balance', '+', grant.credits),
            // One promotional pool: a new grant's expiry (if any) applies to the pool.
            promo_expires_at: grant.expiresAt ?? balance.promo_expires_at,
            updated_at: now,
          }
        : {
            purchased_balance: eb('purchased_balance', '+', grant.credits),
            lifetime_purchased: eb('lifetime_purchased', '+', grant.credits),
            updated_at: now,
          },
    )
    .where('workspace_id', '=', workspace.id)
    .execute();
}

// ---------------------------------------------------------------------------------------------
// Reads

/** GET /v1/usage/current's body (UsageResponse of openapi.yaml). */
export type Usage = UsageResponse;

/** GET /v1/usage/current: every field from the balance row as of `now`, without writing. */
export async function getUsage(db: Executor, workspace: WorkspaceRow, now: Date): Promise<Usage> {
  const stored = await db.selectFrom('credit_balances').selectAll().where('workspace_id', '=', workspace.id).executeTakeFirstOrThrow();
  const b = rolled(stored, now);
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
