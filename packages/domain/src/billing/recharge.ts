import { sql } from 'kysely';
import type { AppConfig, CreditPack } from '@sdx/config';
import { type BillingPaymentRow, type Db, jsonRows, type Tx } from '@sdx/db';
import type { Logger } from 'pino';
import { newId } from '../ids';
import type { OutboxSignal } from '../resources';
import type { Clock } from '../time';
import { type BillingEventReason, formatAmount, paymentAlert, recordBillingAlerts } from './alerts';
import { periodStartOf } from '../time';
import { type Actor, recordAudit } from '../audit/audit';
import { type PaymentGateway, paymentFailureOf, PaymentFailed } from '../payment-gateway';

/**
 * Auto-recharge (extensions-2.md 1, bounded by extensions-3.md 1). A settlement that spent
 * credits queues a recharge when it leaves the available credits below the workspace's
 * threshold (`queueAutoRecharges`, in its transaction; a reservation never does): a `pending` auto_recharge payment without a PaymentIntent, at most one in
 * flight per workspace (the unique index billing_payments_one_recharge). The workers' `recharge`
 * background task (`chargeDueRecharges`) claims due ones under a lease and creates the
 * off-session PaymentIntent, with the payment's ID as its Idempotency-Key, so an attempt after
 * a crash makes no second charge. Credits are granted when Stripe's `payment_intent.succeeded`
 * arrives (stripe-events.ts), never here. A declined card, or no card, fails the payment, turns
 * auto-recharge off and sends `billing.auto_recharge_failed`; Stripe unreachable or failing is
 * tried again later with backoff.
 *
 * At most `AUTO_RECHARGE_MAX_PER_MONTH` charges per workspace and UTC month: the charger counts
 * the month's recharges that reached Stripe (a PaymentIntent, or paid) before it charges; the
 * one due past the limit is not charged but failed with reason `monthly_limit`, which turns
 * auto-recharge off and sends `billing.auto_recharge_failed` (one in flight per workspace, so
 * two chargers never count at once).
 */

/** A workspace whose available credits fell below its auto-recharge threshold, and the pack to buy. */
export interface RechargeRequest {
  workspaceId: string;
  pack: CreditPack;
}

/**
 * Queues a recharge for each workspace that has none in flight and still has auto-recharge on;
 * how many were queued. Run in the transaction of the change that crossed the threshold.
 */
export async function queueAutoRecharges(tx: Tx, now: Date, requests: ReadonlyArray<RechargeRequest>): Promise<number> {
  const byWorkspace = new Map(requests.map((r) => [r.workspaceId, r]));
  if (byWorkspace.size === 0) return 0;
  const rows = [...byWorkspace.values()].map((r) => ({
    id: newId('pay'),
    workspace_id: r.workspaceId,
    pack_id: r.pack.id,
    credits: r.pack.credits,
    amount: r.pack.amount,
    currency: r.pack.currency,
  }));
  const { rows: queued } = await sql<{ id: string }>`
    insert into billing_payments (id, workspace_id, kind, pack_id, credits, amount, currency, status, next_attempt_at, created_at, updated_at)
    select v.id, v.workspace_id, 'auto_recharge', v.pack_id, v.credits, v.amount, v.currency, 'pending', ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
    from ${jsonRows(rows, 'id text, workspace_id text, pack_id text, credits bigint, amount bigint, currency text')} as v
    where exists (select 1 from workspaces w where w.id = v.workspace_id and w.auto_recharge_enabled)
    order by v.workspace_id
    on conflict do nothing
    returning id
  `.execute(tx);
  return queued.length;
}

/** Recharges one pass claims at most, and how long a claim holds them (longer than Stripe's timeouts and retries). The task's cadence is in the background catalog. */
export const RECHARGE_BATCH = 10;
export const RECHARGE_LEASE_MS = 2 * 60_000;
/** The wait before the next attempt after Stripe could not be reached, by attempts made (the last repeats). */
export const RECHARGE_RETRY_DELAYS_MS = [5_000, 30_000, 2 * 60_000, 10 * 60_000, 30 * 60_000, 3600_000] as const;
/** Attempts before a recharge Stripe never answered is given up (failed, auto-recharge off). */
export const RECHARGE_MAX_ATTEMPTS = 10;

export function rechargeRetryDelay(attempts: number): number {
  return RECHARGE_RETRY_DELAYS_MS[Math.min(Math.max(attempts, 1), RECHARGE_RETRY_DELAYS_MS.length) - 1];
}

/** Claims due recharges (no PaymentIntent yet) under a lease; each claim is an attempt. */
export async function claimDueRecharges(db: Db, now: Date, limit = RECHARGE_BATCH): Promise<BillingPaymentRow[]> {
  return db
    .updateTable('billing_payments')
    .set({ attempts: sql<number>`attempts + 1`, locked_until: new Date(now.getTime() + RECHARGE_LEASE_MS), updated_at: now })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('billing_payments')
        .select('id')
        .where('kind', '=', 'auto_recharge')
        .where('status', '=', 'pending')
        .where('payment_intent_id', 'is', null)
        .where('next_attempt_at', '<=', now)
        .where((w) => w.or([w('locked_until', 'is', null), w('locked_until', '<=', now)]))
        .orderBy('next_attempt_at')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    )
    .where('status', '=', 'pending')
    .returningAll()
    .execute();
}

/**
 * A recharge that failed for good: the payment `failed`, auto-recharge turned off and
 * `billing.auto_recharge_failed` sent. Only the first transition from pending does it (the
 * charger's card error and Stripe's `payment_intent.payment_failed` may both report one
 * failure); answers whether this call did.
 */
export async function failRecharge(
  tx: Tx,
  config: AppConfig,
  now: Date,
  paymentId: string,
  reason: string,
  paymentIntentId: string | null = null,
  code: BillingEventReason = 'card_declined',
): Promise<boolean> {
  const row = await tx
    .updateTable('billing_payments')
    .set({
      status: 'failed',
      failure_message: reason.slice(0, 500),
      payment_intent_id: sql<string | null>`coalesce(payment_intent_id, ${paymentIntentId})`,
      next_attempt_at: null,
      locked_until: null,
      updated_at: now,
    })
    .where('id', '=', paymentId)
    .where('kind', '=', 'auto_recharge')
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
  if (!row) return false;
  await turnAutoRechargeOff(tx, row.workspace_id, { type: 'system', id: null, ip: null }, code, row.id);
  const after = code === 'monthly_limit' ? 'turn it on again to allow more charges this month' : 'turn it on again once the card is fixed';
  const message = `Auto-recharge of ${row.credits.toLocaleString('en-US')} credits (${formatAmount(row.amount, row.currency)}) failed: ${reason} Auto-recharge is now off; ${after}.`;
  await recordBillingAlerts(tx, config, now, [paymentAlert('billing.auto_recharge_failed', row, null, message, code)]);
  return true;
}

/** Turns auto-recharge off (when on), audited with actor `system` and why. */
export async function turnAutoRechargeOff(
  tx: Tx,
  workspaceId: string,
  actor: Actor,
  reason: BillingEventReason,
  paymentId: string | null,
): Promise<boolean> {
  const changed = await tx
    .updateTable('workspaces')
    .set({ auto_recharge_enabled: false })
    .where('id', '=', workspaceId)
    .where('auto_recharge_enabled', '=', true)
    .returning('id')
    .executeTakeFirst();
  if (!changed) return false;
  await recordAudit(tx, {
    workspaceId,
    action: 'billing.auto_recharge_disabled',
    actor,
    targetType: 'workspace',
    targetId: workspaceId,
    data: { reason, payment_id: paymentId },
  });
  return true;
}

/**
 * The workspace's auto-recharges of the UTC month of `now` that reached Stripe (a PaymentIntent
 * was made, or they were granted), `exceptId` aside: what AUTO_RECHARGE_MAX_PER_MONTH bounds.
 */
export async function rechargesThisMonth(db: Db | Tx, workspaceId: string, now: Date, exceptId: string): Promise<number> {
  const row = await db
    .selectFrom('billing_payments')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('kind', '=', 'auto_recharge')
    .where('created_at', '>=', new Date(`${periodStartOf(now)}T00:00:00Z`))
    .where('id', '<>', exceptId)
    .where((w) => w.or([w('payment_intent_id', 'is not', null), w('status', 'in', ['paid', 'partially_refunded', 'refunded'])]))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export interface RechargeDeps {
  db: Db;
  config: AppConfig;
  clock: Clock;
  log: Logger;
  payments: PaymentGateway;
  outbox: OutboxSignal;
}

/**
 * One batch of due recharges claimed and charged; true when it was full (more may wait). Run by
 * the `recharge` background task (packages/runtime/src/background/catalog.ts); any number of
 * processes run it side by side, as claims skip each other's rows.
 */
export async function chargeDueRecharges(deps: RechargeDeps): Promise<boolean> {
  const claimed = await claimDueRecharges(deps.db, deps.clock.now());
  for (const payment of claimed) await chargeRecharge(deps, payment);
  return claimed.length >= RECHARGE_BATCH;
}

/** One claimed recharge: its PaymentIntent created (or the failure recorded). */
async function chargeRecharge(deps: RechargeDeps, payment: BillingPaymentRow): Promise<void> {
  const { db, clock, log, payments } = deps;
  const [workspace, customer] = await Promise.all([
    db.selectFrom('workspaces').select('auto_recharge_enabled').where('id', '=', payment.workspace_id).executeTakeFirst(),
    db.selectFrom('billing_customers').selectAll().where('workspace_id', '=', payment.workspace_id).executeTakeFirst(),
  ]);
  // Turned off since it was queued, on a first attempt (so no PaymentIntent can exist): not charged.
  if (!workspace?.auto_recharge_enabled && payment.attempts <= 1) {
    await db
      .updateTable('billing_payments')
      .set({
        status: 'failed',
        failure_message: 'Auto-recharge was turned off before the charge.',
        locked_until: null,
        next_attempt_at: null,
        updated_at: clock.now(),
      })
      .where('id', '=', payment.id)
      .where('status', '=', 'pending')
      .execute();
    return;
  }
  if (!customer?.payment_method_id) {
    await failClaimed(deps, payment, 'No saved card to charge.', null, 'no_payment_method');
    return;
  }
  // The month's bound, before any charge (a retry of this payment is not counted twice: it is excluded).
  if (
    payment.attempts <= 1 &&
    (await rechargesThisMonth(db, payment.workspace_id, clock.now(), payment.id)) >= deps.config.autoRechargeMaxPerMonth
  ) {
    const max = deps.config.autoRechargeMaxPerMonth;
    log.warn({ payment_id: payment.id, workspace_id: payment.workspace_id, max }, 'auto-recharge monthly limit reached; turned off');
    await failClaimed(
      deps,
      payment,
      `${max} auto-recharges were charged this month, the most allowed (AUTO_RECHARGE_MAX_PER_MONTH).`,
      null,
      'monthly_limit',
    );
    return;
  }
  try {
    const intent = await payments.chargeSavedCard({
      amount: payment.amount,
      currency: payment.currency,
      customerId: customer.stripe_customer_id,
      paymentMethodId: customer.payment_method_id,
      metadata: { workspace_id: payment.workspace_id, pack_id: payment.pack_id, kind: 'auto_recharge', payment_id: payment.id },
      idempotencyKey: payment.id,
    });
    // The grant waits for payment_intent.succeeded; a webhook quicker than this update set the same ID already.
    await db
      .updateTable('billing_payments')
      .set({
        payment_intent_id: sql<string>`coalesce(payment_intent_id, ${intent.id})`,
        locked_until: null,
        next_attempt_at: null,
        updated_at: clock.now(),
      })
      .where('id', '=', payment.id)
      .execute();
    log.info({ payment_id: payment.id, payment_intent: intent.id, status: intent.status }, 'auto-recharge charged');
  } catch (error) {
    const failure = paymentFailureOf(error);
    const intentId = error instanceof PaymentFailed ? error.paymentIntentId : null;
    if (failure.kind === 'transient' && payment.attempts < RECHARGE_MAX_ATTEMPTS) {
      const next = new Date(clock.now().getTime() + rechargeRetryDelay(payment.attempts));
      log.warn(
        { payment_id: payment.id, attempts: payment.attempts, next_attempt_at: next, stripe: failure },
        'auto-recharge not charged; trying again later',
      );
      await db
        .updateTable('billing_payments')
        .set({ next_attempt_at: next, locked_until: null, updated_at: clock.now() })
        .where('id', '=', payment.id)
        .where('status', '=', 'pending')
        .execute();
      return;
    }
    log.warn({ payment_id: payment.id, stripe: failure }, 'auto-recharge failed');
    await failClaimed(
      deps,
      payment,
      failure.kind === 'card' ? failure.message : 'The payment provider refused the charge.',
      intentId,
      failure.kind === 'card' ? 'card_declined' : 'provider_error',
    );
  }
}

async function failClaimed(
  deps: RechargeDeps,
  payment: BillingPaymentRow,
  reason: string,
  intentId: string | null,
  code: BillingEventReason,
): Promise<void> {
  const { db, config, clock, outbox } = deps;
  const failed = await db.transaction().execute((tx) => failRecharge(tx, config, clock.now(), payment.id, reason, intentId, code));
  if (failed) outbox.written();
}
