import type { BillingPaymentRow, Tx } from '@sdx/db';
import { availableOf, type Balance } from './balances';
import { lockBalance } from './grants';

/**
 * The money moves of billing (extensions-2.md 1), kept with every other write to balances and
 * the ledger: a paid pack becomes purchased credits, a refund takes them back. The callers
 * (billing/stripe-events.ts) decide when, once per payment transition; these functions only
 * move the credits, under the balance row's lock, with the ledger entry that says why.
 */

/** The payment fields the money moves read. */
export type PurchasedPayment = Pick<BillingPaymentRow, 'id' | 'workspace_id' | 'credits' | 'amount'>;

/** What a refund did: the payment as it is now, and the credits removed and not removable. */
export interface RefundOutcome {
  payment: BillingPaymentRow;
  /** Credits taken from purchased_credits by this refund. */
  removed: number;
  /** Credits this refund should have reversed but could not (spent or reserved). */
  shortfall: number;
  /** The workspace's available credits after it. */
  availableCredits: number;
}

/**
 * Locks the workspace's balance row (rolled over to `now`). Billing locks it before the payment
 * row it changes, so a payment's transition and admission (which holds the balance while it
 * queues an auto-recharge) always lock in the same order.
 */
export async function lockWorkspaceBalance(tx: Tx, workspaceId: string, now: Date): Promise<{ balance: Balance; quota: number }> {
  const workspace = await tx.selectFrom('workspaces').select('monthly_quota').where('id', '=', workspaceId).executeTakeFirstOrThrow();
  return { balance: await lockBalance(tx, workspaceId, now, workspace.monthly_quota), quota: workspace.monthly_quota };
}

/**
 * Grants a paid pack: `payment.credits` purchased credits (purchased_balance and
 * lifetime_purchased rise), a `purchase` ledger entry naming the payment. Answers the available
 * credits after it. The caller has moved the payment from pending to paid in this transaction,
 * which is what makes the grant happen once.
 */
export async function grantPurchase(tx: Tx, payment: PurchasedPayment, now: Date): Promise<number> {
  const { balance, quota } = await lockWorkspaceBalance(tx, payment.workspace_id, now);
  await tx
    .insertInto('credit_ledger')
    .values({
      workspace_id: payment.workspace_id,
      entry_type: 'purchase',
      bucket: 'purchased',
      credits: payment.credits,
      purchased_credits: payment.credits,
      period_start: balance.period_start,
      payment_id: payment.id,
      note: 'credit pack bought',
      created_at: now,
    })
    .execute();
  await tx
    .updateTable('credit_balances')
    .set((eb) => ({
      purchased_balance: eb('purchased_balance', '+', payment.credits),
      lifetime_purchased: eb('lifetime_purchased', '+', payment.credits),
      updated_at: now,
    }))
    .where('workspace_id', '=', payment.workspace_id)
    .execute();
  const after = { ...balance, purchased_balance: balance.purchased_balance + payment.credits };
  return availableOf(after, { monthly_quota: quota }, now).total;
}

/** floor(credits × refunded / amount), exactly (the product can pass 2^53). */
export function creditsToReverse(credits: number, amountRefunded: number, amount: number): number {
  const refunded = Math.min(Math.max(amountRefunded, 0), amount);
  return Number((BigInt(credits) * BigInt(refunded)) / BigInt(amount));
}

/**
 * A refund of a granted payment, `amountRefunded` being Stripe's cumulative amount refunded.
 * The credits to reverse are floor(credits × amount_refunded / amount) less what earlier
 * refunds of this payment reversed; up to that is removed from the purchased credits that are
 * neither spent nor reserved (reserved ones are committed to running jobs), never below 0, as
 * a `refund` ledger entry; the rest is recorded as the payment's refund_shortfall_credits.
 * lifetime_purchased is unchanged. The payment becomes partially_refunded or refunded.
 *
 * A refund that says no more than the payment already recorded (a late or repeated event)
 * changes nothing. A payment that granted nothing (pending, failed, mismatch) only records the
 * amount refunded.
 */
export async function reverseRefund(tx: Tx, payment: PurchasedPayment, amountRefunded: number, now: Date): Promise<RefundOutcome | null> {
  // The balance row first, then the payment's: the order every billing writer locks in (as
  // admission does, which holds the balance while it queues an auto-recharge).
  const { balance, quota } = await lockWorkspaceBalance(tx, payment.workspace_id, now);
  const locked = await tx.selectFrom('billing_payments').selectAll().where('id', '=', payment.id).forUpdate().executeTakeFirstOrThrow();
  const cumulative = Math.max(Math.min(amountRefunded, locked.amount), locked.amount_refunded);
  const granted = locked.status === 'paid' || locked.status === 'partially_refunded' || locked.status === 'refunded';
  // An open or lost dispute reversed the whole payment already: a refund then only records its amount (a won dispute applies it).
  const disputed = locked.dispute_status === 'open' || locked.dispute_status === 'lost';
  // Nothing new: the amount is no more than recorded, and (for a granted payment) its credits were reversed already.
  if (
    cumulative <= locked.amount_refunded &&
    (!granted || disputed || creditsToReverse(locked.credits, cumulative, locked.amount) <= locked.refunded_credits)
  )
    return null;
  if (!granted || disputed) {
    const row = await tx
      .updateTable('billing_payments')
      .set({ amount_refunded: cumulative, updated_at: now })
      .where('id', '=', locked.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return { payment: row, removed: 0, shortfall: 0, availableCredits: availableOf(balance, { monthly_quota: quota }, now).total };
  }
  const target = creditsToReverse(locked.credits, cumulative, locked.amount);
  const delta = Math.max(0, target - locked.refunded_credits);
  const { removed, shortfall } = await removePurchased(tx, locked, balance, delta, 'refunded', now);
  const row = await tx
    .updateTable('billing_payments')
    .set((eb) => ({
      amount_refunded: cumulative,
      refunded_credits: target,
      refund_shortfall_credits: eb('refund_shortfall_credits', '+', shortfall),
      status: cumulative >= locked.amount ? 'refunded' : 'partially_refunded',
      updated_at: now,
    }))
    .where('id', '=', locked.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  const after = { ...balance, purchased_balance: balance.purchased_balance - removed };
  return { payment: row, removed, shortfall, availableCredits: availableOf(after, { monthly_quota: quota }, now).total };
}

/** What a dispute's reversal or its won close did: the payment as it is now, the credits moved, the available credits after. */
export interface DisputeOutcome {
  payment: BillingPaymentRow;
  /** Credits taken from (dispute opened) or given back to (dispute won) purchased_credits. */
  moved: number;
  availableCredits: number;
}

/**
 * A dispute (chargeback) of a granted payment reverses it like a full refund: what refunds have
 * not reversed yet (credits − refunded_credits) is removed from the purchased credits that are
 * neither spent nor reserved, as a `refund` ledger entry, the rest recorded as shortfall. The
 * payment becomes `refunded` with dispute_status `open`; disputed_credits is what was removed
 * (a won dispute grants it back). Null when the payment has an open or lost dispute already or
 * granted nothing (the caller keeps the event for the grant).
 */
export async function reverseDispute(tx: Tx, payment: PurchasedPayment, disputeId: string, now: Date): Promise<DisputeOutcome | null> {
  const { balance, quota } = await lockWorkspaceBalance(tx, payment.workspace_id, now);
  const locked = await tx.selectFrom('billing_payments').selectAll().where('id', '=', payment.id).forUpdate().executeTakeFirstOrThrow();
  const granted = locked.status === 'paid' || locked.status === 'partially_refunded' || locked.status === 'refunded';
  if (!granted || locked.dispute_status === 'open' || locked.dispute_status === 'lost') return null;
  const delta = Math.max(0, locked.credits - locked.refunded_credits);
  const { removed, shortfall } = await removePurchased(tx, locked, balance, delta, 'disputed', now);
  const row = await tx
    .updateTable('billing_payments')
    .set((eb) => ({
      status: 'refunded',
      refunded_credits: locked.credits,
      refund_shortfall_credits: eb('refund_shortfall_credits', '+', shortfall),
      dispute_id: disputeId,
      dispute_status: 'open',
      disputed_credits: removed,
      dispute_shortfall_credits: shortfall,
      updated_at: now,
    }))
    .where('id', '=', locked.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  const after = { ...balance, purchased_balance: balance.purchased_balance - removed };
  return { payment: row, moved: removed, availableCredits: availableOf(after, { monthly_quota: quota }, now).total };
}

/**
 * A won dispute: the credits it removed (disputed_credits) are granted back as a positive
 * `refund` entry (lifetime_purchased unchanged, as the dispute left it), its shortfall leaves
 * refund_shortfall_credits, and the payment's own refunds decide its status again (a refund
 * recorded while the dispute stood is applied now). Null unless the dispute is open.
 */
export async function restoreDispute(tx: Tx, payment: PurchasedPayment, now: Date): Promise<DisputeOutcome | null> {
  const { balance, quota } = await lockWorkspaceBalance(tx, payment.workspace_id, now);
  const locked = await tx.selectFrom('billing_payments').selectAll().where('id', '=', payment.id).forUpdate().executeTakeFirstOrThrow();
  if (locked.dispute_status !== 'open') return null;
  const back = locked.disputed_credits;
  if (back > 0) {
    await tx
      .insertInto('credit_ledger')
      .values({
        workspace_id: locked.workspace_id,
        entry_type: 'refund',
        bucket: 'purchased',
        credits: back,
        purchased_credits: back,
        period_start: balance.period_start,
        payment_id: locked.id,
        note: 'dispute won: credits granted back',
        created_at: now,
      })
      .execute();
    await tx
      .updateTable('credit_balances')
      .set((eb) => ({ purchased_balance: eb('purchased_balance', '+', back), updated_at: now }))
      .where('workspace_id', '=', locked.workspace_id)
      .execute();
  }
  const status = locked.amount_refunded >= locked.amount ? 'refunded' : locked.amount_refunded > 0 ? 'partially_refunded' : 'paid';
  await tx
    .updateTable('billing_payments')
    .set((eb) => ({
      status,
      refunded_credits: locked.credits - locked.disputed_credits - locked.dispute_shortfall_credits,
      refund_shortfall_credits: eb('refund_shortfall_credits', '-', locked.dispute_shortfall_credits),
      dispute_status: 'won',
      updated_at: now,
    }))
    .where('id', '=', locked.id)
    .execute();
  // A refund recorded while the dispute stood reverses its part now.
  const refund = locked.amount_refunded > 0 ? await reverseRefund(tx, locked, locked.amount_refunded, now) : null;
  const row =
    refund?.payment ?? (await tx.selectFrom('billing_payments').selectAll().where('id', '=', locked.id).executeTakeFirstOrThrow());
  const after = { ...balance, purchased_balance: balance.purchased_balance + back - (refund?.removed ?? 0) };
  return { payment: row, moved: back - (refund?.removed ?? 0), availableCredits: availableOf(after, { monthly_quota: quota }, now).total };
}

/**
 * Takes up to `delta` credits back from a payment's grant (a refund or a dispute): as many as
 * the purchased credits neither spent nor reserved allow, as a `refund` ledger entry, the rest
 * being the shortfall. The caller holds the balance row's lock (lockWorkspaceBalance).
 */
async function removePurchased(
  tx: Tx,
  locked: Pick<BillingPaymentRow, 'id' | 'workspace_id'>,
  balance: Pick<Balance, 'purchased_balance' | 'purchased_reserved' | 'period_start'>,
  delta: number,
  why: 'refunded' | 'disputed',
  now: Date,
): Promise<{ removed: number; shortfall: number }> {
  const removable = Math.max(0, balance.purchased_balance - balance.purchased_reserved);
  const removed = Math.min(delta, removable);
  const shortfall = delta - removed;
  if (removed > 0) {
    await tx
      .insertInto('credit_ledger')
      .values({
        workspace_id: locked.workspace_id,
        entry_type: 'refund',
        bucket: 'purchased',
        credits: -removed,
        purchased_credits: -removed,
        period_start: balance.period_start,
        payment_id: locked.id,
        note: shortfall > 0 ? `payment ${why}; ${shortfall} credits already spent or reserved` : `payment ${why}`,
        created_at: now,
      })
      .execute();
    await tx
      .updateTable('credit_balances')
      .set((eb) => ({ purchased_balance: eb('purchased_balance', '-', removed), updated_at: now }))
      .where('workspace_id', '=', locked.workspace_id)
      .execute();
  }
  return { removed, shortfall };
}
