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
  const cumulative = Math.min(amountRefunded, locked.amount);
  if (cumulative <= locked.amount_refunded) return null;
  const granted = locked.status === 'paid' || locked.status === 'partially_refunded' || locked.status === 'refunded';
  if (!granted) {
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
        note: shortfall > 0 ? `payment refunded; ${shortfall} credits already spent or reserved` : 'payment refunded',
        created_at: now,
      })
      .execute();
    await tx
      .updateTable('credit_balances')
      .set((eb) => ({ purchased_balance: eb('purchased_balance', '-', removed), updated_at: now }))
      .where('workspace_id', '=', locked.workspace_id)
      .execute();
  }
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
