import { type Insertable, sql } from 'kysely';
import type { CreditBalanceRow, CreditLedgerTable, CreditReservationsTable, Executor, ReservationRow, Tx, WorkspaceRow } from '@sdx/db';
import { ApiError } from '../errors';
import { newId } from '../ids';
import { periodStartOf } from '../time';

/**
 * Credits as a ledger. Every grant, reservation, release and settlement is a row in
 * credit_ledger; the per-workspace balance row is changed in the same transaction, under a
 * row lock, so concurrent reservations serialise per workspace and can never overdraw.
 *
 * Buckets: the monthly plan allowance (renewed on the first day of the UTC month), promotional
 * credits (expire at promo_expires_at) and purchased credits (never expire). Reserving and
 * spending draw from plan first, then promotional, then purchased.
 */

export type Balance = CreditBalanceRow;

export interface Available {
  plan: number;
  promo: number;
  purchased: number;
  total: number;
}

function promoActive(balance: Balance, now: Date): boolean {
  return balance.promo_expires_at === null || balance.promo_expires_at.getTime() > now.getTime();
}

/** The balance as of `now`: a new month resets the plan usage; expired promotional credits are gone. */
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

export async function openBalance(tx: Tx, workspace: WorkspaceRow, now: Date): Promise<void> {
  const period = periodStartOf(now);
  await tx.insertInto('credit_balances').values({ workspace_id: workspace.id, period_start: period }).execute();
  await tx
    .insertInto('credit_ledger')
    .values({
      workspace_id: workspace.id,
      entry_type: 'plan_allowance',
      bucket: 'plan',
      credits: workspace.monthly_quota,
      plan_credits: workspace.monthly_quota,
      period_start: period,
      note: 'monthly plan allowance',
    })
    .execute();
}

/**
 * Locks the workspace's balance row for the rest of the transaction and applies a month
 * rollover or promotional expiry, each recorded in the ledger.
 */
export async function lockBalance(tx: Tx, workspaceId: string, now: Date, quota: number): Promise<Balance> {
  const locked = await lockBalances(tx, [{ id: workspaceId, monthly_quota: quota }], now);
  const balance = locked.get(workspaceId);
  if (!balance) throw new Error(`workspace ${workspaceId} has no balance row`);
  return balance;
}

/**
 * lockBalance for several workspaces in one statement. Rows are locked in workspace_id order,
 * the order every multi-workspace locker uses, so two such transactions cannot deadlock.
 */
export async function lockBalances(
  tx: Tx,
  workspaces: ReadonlyArray<Pick<WorkspaceRow, 'id' | 'monthly_quota'>>,
  now: Date,
): Promise<Map<string, Balance>> {
  if (workspaces.length === 0) return new Map();
  const rows = await balanceLock(tx, workspaces).execute();
  return rollLocked(tx, rows, workspaces, now);
}

/** The statement of lockBalances, for a caller that sends it together with another (see together). */
export function balanceLock(tx: Tx, workspaces: ReadonlyArray<Pick<WorkspaceRow, 'id'>>) {
  return tx
    .selectFrom('credit_balances')
    .selectAll()
    .where('workspace_id', 'in', [...new Set(workspaces.map((w) => w.id))])
    .orderBy('workspace_id')
    .forUpdate();
}

/** The rest of lockBalances, on the rows balanceLock locked: rollovers and expiries recorded. */
export async function rollLocked(
  tx: Tx,
  rows: readonly Balance[],
  workspaces: ReadonlyArray<Pick<WorkspaceRow, 'id' | 'monthly_quota'>>,
  now: Date,
): Promise<Map<string, Balance>> {
  const quotas = new Map(workspaces.map((w) => [w.id, w.monthly_quota]));
  const locked = new Map<string, Balance>();
  for (const row of rows) locked.set(row.workspace_id, await applyRollover(tx, row, now, quotas.get(row.workspace_id)!));
  return locked;
}

/** Records a month rollover or promotional expiry of a locked balance row (rare: at most monthly). */
async function applyRollover(tx: Tx, current: Balance, now: Date, quota: number): Promise<Balance> {
  const workspaceId = current.workspace_id;
  const next = rolled(current, now);
  if (next === current) return current;
  if (next.period_start !== current.period_start) {
    await tx
      .insertInto('credit_ledger')
      .values({
        workspace_id: workspaceId,
        entry_type: 'plan_allowance',
        bucket: 'plan',
        credits: quota,
        plan_credits: quota,
        period_start: next.period_start,
        note: 'monthly plan allowance',
      })
      .execute();
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

export interface ReserveRequest {
  jobId: string;
  credits: number;
  units: number;
}

/** Split of `amount` over the buckets in spending order. */
function split(amount: number, available: Available): { plan: number; promo: number; purchased: number } {
  const plan = Math.min(amount, available.plan);
  const promo = Math.min(amount - plan, available.promo);
  const purchased = amount - plan - promo;
  return { plan, promo, purchased };
}

export interface PlannedReservation {
  reservation: Insertable<CreditReservationsTable>;
  ledger: Insertable<CreditLedgerTable>;
}

/**
 * The reservation of one job's maximum cost against a locked balance, without writing: the rows
 * to insert and the balance after it. Throws 402 when it does not fit. Several plans can follow
 * each other on the returned balance (a batch, a group of submissions) and be written at once
 * with their jobs (writeAdmissions).
 */
export function planReservation(
  workspace: Pick<WorkspaceRow, 'id' | 'monthly_quota'>,
  balance: Balance,
  now: Date,
  request: ReserveRequest,
): { planned: PlannedReservation; balance: Balance } {
  const available = availableOf(balance, workspace, now);
  if (request.credits > available.total) {
    throw insufficientCredits(balance, available, request.credits);
  }
  const parts = split(request.credits, available);
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
 * the balance locks, so the planned totals are the truth). writeAdmissions adds the job rows to
 * it.
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

export function insufficientCredits(balance: Balance, available: Available, required: number): ApiError {
  const reserved = balance.plan_reserved + balance.promo_reserved + balance.purchased_reserved;
  return new ApiError('insufficient_credits', `This request needs ${required} credits; ${available.total} are available.`, {
    available: available.total,
    reserved,
    required,
  });
}

/**
 * Takes the held reservation of a job for release, or nothing when it was already settled or
 * released (settlement claims through claimHeldReservations, in settle-many.ts).
 */
async function claimForRelease(tx: Tx, jobId: string, now: Date): Promise<ReservationRow | undefined> {
  return tx
    .updateTable('credit_reservations')
    .set({ status: 'released', settled_credits: 0, closed_at: now })
    .where('job_id', '=', jobId)
    .where('status', '=', 'held')
    .returningAll()
    .executeTakeFirst();
}

/** Returns a job's whole reservation (failure, cancellation). At most once; false when not held. */
export async function releaseReservation(tx: Tx, now: Date, jobId: string, note: string): Promise<boolean> {
  const reservation = await claimForRelease(tx, jobId, now);
  if (!reservation) return false;
  const balance = await lockBalance(tx, reservation.workspace_id, now, await quotaOf(tx, reservation.workspace_id));
  const total = reservation.plan_amount + reservation.promo_amount + reservation.purchased_amount;
  await tx
    .insertInto('credit_ledger')
    .values({
      workspace_id: reservation.workspace_id,
      entry_type: 'release',
      credits: total,
      plan_credits: reservation.plan_amount,
      promo_credits: reservation.promo_amount,
      purchased_credits: reservation.purchased_amount,
      units: reservation.units,
      reservation_id: reservation.id,
      job_id: jobId,
      period_start: balance.period_start,
      note,
    })
    .execute();
  await tx
    .updateTable('credit_balances')
    .set((eb) => ({
      plan_reserved: eb('plan_reserved', '-', reservation.plan_amount),
      promo_reserved: eb('promo_reserved', '-', reservation.promo_amount),
      purchased_reserved: eb('purchased_reserved', '-', reservation.purchased_amount),
      units_reserved: eb('units_reserved', '-', reservation.units),
      updated_at: now,
    }))
    .where('workspace_id', '=', reservation.workspace_id)
    .execute();
  return true;
}

async function quotaOf(db: Executor, workspaceId: string): Promise<number> {
  const row = await db.selectFrom('workspaces').select('monthly_quota').where('id', '=', workspaceId).executeTakeFirstOrThrow();
  return row.monthly_quota;
}

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

export interface Usage {
  period_start: string;
  credit_limit: number;
  units_used: number;
  units_reserved: number;
  units_remaining: number;
  credits_used: number;
  credits_reserved: number;
  credits_remaining: number;
  purchased_credits: number;
  promotional_credits: number;
  promotional_expires_at: string | null;
  lifetime_purchased: number;
  lifetime_spent: number;
}

/** GET /v1/usage/current: every field from the balance row as of `now`, without writing. */
export async function getUsage(db: Executor, workspace: WorkspaceRow, now: Date): Promise<Usage> {
  const stored = await db.selectFrom('credit_balances').selectAll().where('workspace_id', '=', workspace.id).executeTakeFirstOrThrow();
  const b = rolled(stored, now);
  const available = availableOf(b, workspace, now);
  const promoLive = promoActive(b, now);
  const creditsReserved = b.plan_reserved + b.promo_reserved + b.purchased_reserved;
  return {
    period_start: b.period_start,
    credit_limit: workspace.monthly_quota,
    units_used: b.units_used,
    units_reserved: b.units_reserved,
    units_remaining: available.total,
    credits_used: b.plan_used + b.period_promo_spent + b.period_purchased_spent,
    credits_reserved: creditsReserved,
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
