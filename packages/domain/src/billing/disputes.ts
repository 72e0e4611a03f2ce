import type { BillingPaymentRow, Tx } from '@sdx/db';
import { systemActor, recordAudit } from '../audit/audit';
import { reverseDispute, reverseRefund, restoreDispute } from '../credits/purchases';
import { type BillingAlert, formatAmount, paymentAlert } from './alerts';
import { turnAutoRechargeOff } from './recharge';
import type { ChargeDispute, ChargeRefund, PaymentEvent } from '../payment-gateway';
import { lowCreditsBetween } from './triggers';

/**
 * Refunds and disputes of Stripe charges (extensions-2.md 1, extensions-3.md 1), each called
 * once per Stripe event ID (stripe-events.ts claims the ID first):
 * - `charge.refunded` reverses floor(credits × amount_refunded / amount) less what earlier
 *   refunds reversed (credits/purchases.ts reverseRefund);
 * - `charge.dispute.created` reverses like a full refund (reverseDispute) and turns auto-recharge
 *   off: a card whose holder disputes a charge is not charged again unasked;
 * - `charge.dispute.closed` with `status: won` grants back what the dispute took
 *   (restoreDispute); `lost` only records it.
 * An event whose payment is not granted yet (unknown to the service so far, pending, or an
 * auto-recharge marked failed that may still succeed) is kept in stripe_held_events by its
 * PaymentIntent, and `applyHeldEvents` applies it, in the order received, in the transaction of
 * the grant: so a refund or dispute that overtakes its payment's grant still takes it back.
 */

/** A refund or a dispute, as a money event carries it and as stripe_held_events keeps it. */
type MoneyObject = { refund: ChargeRefund } | { dispute: ChargeDispute };

export interface MoneyEventResult {
  paymentId: string | null;
  alerts: BillingAlert[];
  /** Whether this event changed nothing but was kept for the payment's grant. */
  held: boolean;
}

const GRANTED = new Set(['paid', 'partially_refunded', 'refunded']);
/** Statuses from which a payment may still be granted: a refund or dispute of it waits for the grant. */
const GRANTABLE = new Set(['pending', 'failed']);

const SYSTEM = systemActor('stripe');

/**
 * The held event's object, as stripe_held_events.object keeps it: the fields read, named as
 * Stripe's charge and dispute objects name them (rows written by earlier releases hold Stripe's
 * whole object, read alike).
 */
interface HeldObject {
  id?: string;
  payment_intent?: string | { id: string } | null;
  amount_refunded?: number;
  status?: string;
}

function heldObjectOf(money: MoneyObject): HeldObject {
  if ('refund' in money) return { payment_intent: money.refund.paymentIntentId, amount_refunded: money.refund.amountRefunded };
  return { id: money.dispute.id, payment_intent: money.dispute.paymentIntentId, status: money.dispute.status };
}

function moneyObjectOf(type: string, held: HeldObject): MoneyObject {
  const intent = held.payment_intent;
  const paymentIntentId = typeof intent === 'string' ? intent : (intent?.id ?? null);
  if (type === 'charge.refunded') return { refund: { paymentIntentId, amountRefunded: held.amount_refunded ?? 0 } };
  return { dispute: { id: held.id ?? '', paymentIntentId, status: held.status ?? '' } };
}

/** The PaymentIntent a refund or dispute belongs to. */
function intentOf(money: MoneyObject): string | null {
  return 'refund' in money ? money.refund.paymentIntentId : money.dispute.paymentIntentId;
}

async function paymentOfIntent(tx: Tx, intentId: string): Promise<BillingPaymentRow | undefined> {
  return tx.selectFrom('billing_payments').selectAll().where('payment_intent_id', '=', intentId).executeTakeFirst();
}

/** Keeps the event for the grant of its payment. */
async function hold(tx: Tx, event: PaymentEvent, money: MoneyObject, intentId: string): Promise<void> {
  await tx
    .insertInto('stripe_held_events')
    .values({ event_id: event.id, payment_intent_id: intentId, type: event.type, object: JSON.stringify(heldObjectOf(money)) })
    .onConflict((oc) => oc.column('event_id').doNothing())
    .execute();
}

/**
 * One money event of a charge (a refund or a dispute's creation or close): applied to its
 * payment when that payment was granted, kept for the grant when it may still be, else ignored
 * (a payment that never grants, or none of this service).
 */
export async function chargeMoneyEvent(tx: Tx, event: PaymentEvent, now: Date): Promise<MoneyEventResult | null> {
  const money: MoneyObject | null =
    event.kind === 'refund' ? { refund: event.refund } : event.kind === 'dispute' ? { dispute: event.dispute } : null;
  if (!money) return null;
  const intentId = intentOf(money);
  if (!intentId) return null;
  const payment = await paymentOfIntent(tx, intentId);
  if (!payment || GRANTABLE.has(payment.status)) {
    await hold(tx, event, money, intentId);
    // The card is not charged again meanwhile.
    if (payment && event.type === 'charge.dispute.created')
      await turnAutoRechargeOff(tx, payment.workspace_id, SYSTEM, 'dispute', payment.id);
    return { paymentId: payment?.id ?? null, alerts: [], held: true };
  }
  return { paymentId: payment.id, alerts: await applyMoneyEvent(tx, payment, event.type, money, now), held: false };
}

/**
 * Applies, in the grant's transaction, the events kept for the payment's PaymentIntent (each
 * once: marked applied). Answers whether there were any, and their alerts.
 */
export async function applyHeldEvents(
  tx: Tx,
  payment: BillingPaymentRow,
  now: Date,
): Promise<{ applied: boolean; alerts: BillingAlert[] }> {
  if (!payment.payment_intent_id) return { applied: false, alerts: [] };
  const held = await tx
    .updateTable('stripe_held_events')
    .set({ applied_at: now })
    .where('payment_intent_id', '=', payment.payment_intent_id)
    .where('applied_at', 'is', null)
    .returning(['event_id', 'type', 'object', 'received_at'])
    .execute();
  if (held.length === 0) return { applied: false, alerts: [] };
  held.sort((a, b) => a.received_at.getTime() - b.received_at.getTime() || a.event_id.localeCompare(b.event_id));
  const alerts: BillingAlert[] = [];
  for (const event of held) {
    const current = await tx.selectFrom('billing_payments').selectAll().where('id', '=', payment.id).executeTakeFirstOrThrow();
    const object = (typeof event.object === 'string' ? JSON.parse(event.object) : event.object) as HeldObject;
    alerts.push(...(await applyMoneyEvent(tx, current, event.type, moneyObjectOf(event.type, object), now)));
  }
  return { applied: true, alerts };
}

async function applyMoneyEvent(tx: Tx, payment: BillingPaymentRow, type: string, money: MoneyObject, now: Date): Promise<BillingAlert[]> {
  if ('refund' in money) return type === 'charge.refunded' ? refunded(tx, payment, money.refund, now) : [];
  switch (type) {
    case 'charge.dispute.created':
      return disputeCreated(tx, payment, money.dispute, now);
    case 'charge.dispute.closed':
      return disputeClosed(tx, payment, money.dispute, now);
    default:
      return [];
  }
}

/** The low-credits alert when taking credits back crossed the threshold downward. */
async function lowAfter(tx: Tx, workspaceId: string, removed: number, available: number): Promise<BillingAlert[]> {
  if (removed <= 0) return [];
  const workspace = await tx
    .selectFrom('workspaces')
    .select(['id', 'low_credits_threshold'])
    .where('id', '=', workspaceId)
    .executeTakeFirstOrThrow();
  const low = lowCreditsBetween(workspace, available + removed, available);
  return low ? [low] : [];
}

async function refunded(tx: Tx, payment: BillingPaymentRow, charge: ChargeRefund, now: Date): Promise<BillingAlert[]> {
  const refund = await reverseRefund(tx, payment, charge.amountRefunded, now);
  // A refund of a payment that granted nothing (mismatch), or of a disputed one, only records the amount.
  if (!refund || !GRANTED.has(refund.payment.status) || (refund.removed === 0 && refund.shortfall === 0)) return [];
  const row = refund.payment;
  await recordAudit(tx, {
    workspaceId: row.workspace_id,
    action: 'billing.payment_refunded',
    actor: SYSTEM,
    targetType: 'payment',
    targetId: row.id,
    data: {
      amount_refunded: row.amount_refunded,
      refunded_credits: row.refunded_credits,
      removed_credits: refund.removed,
      shortfall_credits: refund.shortfall,
    },
  });
  const spent =
    row.refund_shortfall_credits > 0
      ? ` ${row.refund_shortfall_credits.toLocaleString('en-US')} of them were already spent or reserved.`
      : '';
  const message = `${formatAmount(row.amount_refunded, row.currency)} of ${formatAmount(row.amount, row.currency)} refunded: ${row.refunded_credits.toLocaleString('en-US')} purchased credits reversed in all.${spent}`;
  return [
    paymentAlert('billing.payment_refunded', row, refund.availableCredits, message, 'refund'),
    ...(await lowAfter(tx, row.workspace_id, refund.removed, refund.availableCredits)),
  ];
}

async function disputeCreated(tx: Tx, payment: BillingPaymentRow, dispute: ChargeDispute, now: Date): Promise<BillingAlert[]> {
  // A dispute of any payment stops charging the card unasked (audited when it was on).
  await turnAutoRechargeOff(tx, payment.workspace_id, SYSTEM, 'dispute', payment.id);
  const outcome = await reverseDispute(tx, payment, dispute.id, now);
  if (!outcome) return [];
  const row = outcome.payment;
  await recordAudit(tx, {
    workspaceId: row.workspace_id,
    action: 'billing.payment_disputed',
    actor: SYSTEM,
    targetType: 'payment',
    targetId: row.id,
    data: { dispute_id: dispute.id, disputed_credits: row.disputed_credits, shortfall_credits: row.dispute_shortfall_credits },
  });
  const spent =
    row.dispute_shortfall_credits > 0
      ? ` ${row.dispute_shortfall_credits.toLocaleString('en-US')} credits were already spent or reserved.`
      : '';
  const message = `The charge of ${formatAmount(row.amount, row.currency)} is disputed: ${row.disputed_credits.toLocaleString('en-US')} purchased credits taken back and auto-recharge turned off.${spent}`;
  return [
    paymentAlert('billing.payment_refunded', row, outcome.availableCredits, message, 'dispute'),
    ...(await lowAfter(tx, row.workspace_id, outcome.moved, outcome.availableCredits)),
  ];
}

async function disputeClosed(tx: Tx, payment: BillingPaymentRow, dispute: ChargeDispute, now: Date): Promise<BillingAlert[]> {
  if (payment.dispute_status !== 'open' || (payment.dispute_id !== null && payment.dispute_id !== dispute.id)) return [];
  if (dispute.status !== 'won') {
    if (dispute.status !== 'lost') return [];
    await tx.updateTable('billing_payments').set({ dispute_status: 'lost', updated_at: now }).where('id', '=', payment.id).execute();
    await recordAudit(tx, {
      workspaceId: payment.workspace_id,
      action: 'billing.dispute_closed',
      actor: SYSTEM,
      targetType: 'payment',
      targetId: payment.id,
      data: { dispute_id: dispute.id, status: 'lost', credits_granted_back: 0 },
    });
    return [];
  }
  const outcome = await restoreDispute(tx, payment, now);
  if (!outcome) return [];
  const row = outcome.payment;
  await recordAudit(tx, {
    workspaceId: row.workspace_id,
    action: 'billing.dispute_closed',
    actor: SYSTEM,
    targetType: 'payment',
    targetId: row.id,
    data: { dispute_id: dispute.id, status: 'won', credits_granted_back: row.disputed_credits },
  });
  const message = `The dispute of the charge of ${formatAmount(row.amount, row.currency)} was won: ${row.disputed_credits.toLocaleString('en-US')} purchased credits granted back.`;
  return [paymentAlert('billing.payment_succeeded', row, outcome.availableCredits, message, 'dispute_won')];
}
