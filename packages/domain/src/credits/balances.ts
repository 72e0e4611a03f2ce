import type { CompiledQuery, Insertable } from 'kysely';
import {
  type CreditBalanceRow,
  type CreditLedgerTable,
  type CreditReservationsTable,
  type Db,
  sendTogether,
  type Tx,
  type WorkspaceRow,
} from '@sdx/db';
import { ApiError } from '../errors';
import { newId } from '../ids';
import { periodStartOf } from '../time';

/**
 * The money module (this folder): every write to credit balances, reservations and the ledger
 * is in credits/. This file: the balance arithmetic (the bucket rule, what is available, a
 * reservation's plan) and the balance rows it locks and rolls over; postings.ts books
 * settlements and writes the ledger postings of settlements and releases; reservations.ts
 * writes, claims and releases reservations; purchases.ts grants paid packs and reverses refunds; grants.ts
 * opens balances and adds credits; usage.ts reads.
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

export function promoActive(balance: Balance, now: Date): boolean {
  return balance.promo_expires_at === null || balance.promo_expires_at.getTime() > now.getTime();
}

/**
 * The balance as of `now`, without writing: a new month resets the plan usage; expired
 * promotional credits are gone. (rollOver records the same change on a locked row.)
 */
export function balanceAsOf(balance: Balance, now: Date): Balance {
  const period = periodStartOf(now);
  let b = balance;
  if (b.period_start < period) {
    b = {
      ...b,
      period_start: period,
      plan_used: 0,
      units_used: 0,
      period_promo_spent: 0,
      period_purchased_spent: 0,
      month_spent: 0,
      cap_alerted: false,
    };
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

export interface ReserveRequest {
  jobId: string;
  credits: number;
  units: number;
  /** The API key whose submission it is (its month's spend counts it); null for sessions and the system. */
  keyId?: string | null;
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
        api_key_id: request.keyId ?? null,
        created_at: now,
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
      month_spent: balance.month_spent + request.credits,
    },
  };
}

/**
 * The reservations of a whole submission (a job, or a batch's children), all or nothing: when
 * they do not all fit, the 402 tells what all of them require against what is available.
 */
export function planReservations(
  workspace: Pick<WorkspaceRow, 'id' | 'monthly_quota'>,
  balance: Balance,
  now: Date,
  requests: readonly ReserveRequest[],
): { planned: PlannedReservation[]; balance: Balance } | { refused: ApiError } {
  const required = requests.reduce((sum, r) => sum + r.credits, 0);
  const available = availableOf(balance, workspace, now);
  if (required > available.total) return { refused: insufficientCredits(balance, available, required) };
  const planned: PlannedReservation[] = [];
  let after = balance;
  for (const request of requests) {
    const next = planReservation(workspace, after, now, request);
    planned.push(next.planned);
    after = next.balance;
  }
  return { planned, balance: after };
}

// ---------------------------------------------------------------------------------------------
// Balance rows: opening, locking, rollover and expiry

/**
 * Locks the balance rows of `workspaces` for the rest of the transaction and applies a month
 * rollover or promotional expiry, each recorded in the ledger. Returns them by workspace.
 */
export async function lockBalances(
  tx: Tx,
  workspaces: ReadonlyArray<Pick<WorkspaceRow, 'id' | 'monthly_quota'>>,
  now: Date,
): Promise<Map<string, Balance>> {
  if (workspaces.length === 0) return new Map();
  return rollOver(
    tx,
    await balanceLock(
      tx,
      workspaces.map((w) => w.id),
    ).execute(),
    workspaces,
    now,
  );
}

/**
 * The locking statement of lockBalances, built and not run, for a caller that sends it together
 * with other statements; rollOver then finishes the lock on the rows it returned.
 */
export function balanceLock(tx: Tx, workspaceIds: readonly string[]) {
  return tx
    .selectFrom('credit_balances')
    .selectAll()
    .where('workspace_id', 'in', [...new Set(workspaceIds)])
    .orderBy('workspace_id')
    .forUpdate();
}

/**
 * The balance rows of `workspaces` read together with `others` in one round trip (the lock
 * first), then rolled over: locked for the rest of the transaction ('lock'), or as of `now`
 * without locking or writing ('peek', a quote). Answers the balances by workspace, then each
 * other statement's rows.
 */
export async function readBalancesWith<Q extends readonly CompiledQuery<unknown>[]>(
  db: Tx | Db,
  workspaces: ReadonlyArray<Pick<WorkspaceRow, 'id' | 'monthly_quota'>>,
  now: Date,
  mode: 'lock' | 'peek',
  ...others: Q
): Promise<[Map<string, Balance>, ...RowsOf<Q>]> {
  const ids = workspaces.map((w) => w.id);
  const read =
    mode === 'lock'
      ? balanceLock(db as Tx, ids).compile()
      : db.selectFrom('credit_balances').selectAll().where('workspace_id', 'in', ids).compile();
  const [rows, ...rest] = (await sendTogether(db, read, ...others)) as unknown as [Balance[], ...RowsOf<Q>];
  const balances =
    mode === 'lock'
      ? await rollOver(db as Tx, rows, workspaces, now)
      : new Map(rows.map((row) => [row.workspace_id, balanceAsOf(row, now)]));
  return [balances, ...rest];
}

/** Each statement's rows, as sendTogether answers them. */
type RowsOf<Q extends readonly CompiledQuery<unknown>[]> = { [K in keyof Q]: Q[K] extends CompiledQuery<infer R> ? R[] : never };

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

export function allowanceEntry(workspaceId: string, quota: number, period: string): Insertable<CreditLedgerTable> {
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
  const next = balanceAsOf(current, now);
  if (next === current) return current;
  if (next.period_start !== current.period_start) {
    await tx
      .insertInto('credit_ledger')
      .values(allowanceEntry(workspaceId, quota, next.period_start))
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
      month_spent: next.month_spent,
      cap_alerted: next.cap_alerted,
      promo_balance: next.promo_balance,
      updated_at: now,
    })
    .where('workspace_id', '=', workspaceId)
    .execute();
  return next;
}
