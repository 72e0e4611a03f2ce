import { isUnavailableError } from '@sdx/config';
import type { components } from '@sdx/contract';
import type { BillingPaymentRow, Tx } from '@sdx/db';
import { grantPurchase, lockWorkspaceBalance, reverseRefund } from '../credits/purchases';
import { applyHeldEvents, chargeMoneyEvent } from './disputes';
import { availableOf } from '../credits/balances';
import { ApiError } from '../errors';
import { GroupCommitOverloaded } from '../group-commit';
import { newId } from '../ids';
import type { Resources } from '../resources';
import { retryDeadlocks } from '../tx';
import { type BillingAlert, formatAmount, paymentAlert, recordBillingAlerts } from './alerts';
import { findPack } from './packs';
import { checkoutPaymentRow } from './payments';
import { failRecharge } from './recharge';
import { handleSubscriptionEvent, isSubscriptionEvent, prefetchSubscription, SUBSCRIPTION_EVENT_TYPES } from './subscription-events';
import { requirePayments } from './availability';
import {
  type CompletedCheckout,
  type PaymentEvent,
  type PaymentGateway,
  paymentFailureOf,
  type PaymentOutcome,
  type ProviderSubscription,
  type SavedCard,
} from '../payment-gateway';

/**
 * Stripe's webhook (POST /v1/billing/stripe/webhook, extensions-2.md 1). The signature is
 * checked on the exact bytes received (300 s tolerance); then each event is handled in ONE
 * transaction that first claims its ID in stripe_events (a repeat, even a concurrent one that
 * waits on the first's uncommitted row, finds it taken: `duplicate`), then makes the payment's
 * transition, guarded in SQL (`where status = 'pending'`), so a Checkout Session or a
 * PaymentIntent grants once whichever of its events arrives first, then the money move
 * (credits/purchases.ts) and the billing event. A failure rolls all of it back and answers 503,
 * and Stripe's retry is handled as the first delivery would have been.
 *
 * The one network call of a handled event (reading the card a checkout paid with) is made
 * before the transaction opens. When it fails, the credits are granted all the same and the
 * card is not saved (a later checkout saves one): the buyer's credits matter more.
 */
export type StripeWebhookReceipt = components['schemas']['StripeWebhookReceipt'];
type Outcome = StripeWebhookReceipt['outcome'];

/** The events the service acts on; others answer `ignored` without being recorded. */
const HANDLED_TYPES = new Set([
  'checkout.session.completed',
  'checkout.session.async_payment_succeeded',
  'payment_intent.succeeded',
  'payment_intent.payment_failed',
  'charge.refunded',
  ...SUBSCRIPTION_EVENT_TYPES,
  'charge.dispute.created',
  'charge.dispute.closed',
]);

/** The signature tolerance: a signed timestamp older than this is refused. */
export const STRIPE_SIGNATURE_TOLERANCE_S = 300;

interface Handled {
  outcome: Outcome;
  paymentId: string | null;
  alerts: BillingAlert[];
  /** Billing events were written (by `alerts` or by failRecharge): wake the webhook dispatcher after commit. */
  wroteEvents?: boolean;
}

const ignored: Handled = { outcome: 'ignored', paymentId: null, alerts: [] };

export async function receiveStripeEvent(
  services: Pick<Resources, 'db' | 'config' | 'clock' | 'log' | 'outbox' | 'payments'>,
  rawBody: Buffer,
  signature: string | undefined,
): Promise<StripeWebhookReceipt> {
  const payments = requirePayments(services);
  let event: PaymentEvent;
  try {
    if (!signature) throw new Error('no Stripe-Signature header');
    event = payments.verifyEvent(rawBody, signature, STRIPE_SIGNATURE_TOLERANCE_S);
  } catch {
    throw new ApiError('invalid_signature', 'The Stripe-Signature header is missing, wrong or older than 300 s.');
  }
  if (!HANDLED_TYPES.has(event.type)) return { received: true, outcome: 'ignored' };
  try {
    const seen = await services.db.selectFrom('stripe_events').select('id').where('id', '=', event.id).executeTakeFirst();
    if (seen) return { received: true, outcome: 'duplicate' };
    const card = await cardOf(services, payments, event);
    const subscription = await prefetchSubscription(services, payments, event);
    const handled = await retryDeadlocks(services.log, 'stripe event', () =>
      services.db.transaction().execute((tx) => handleEvent(tx, services, event, card, subscription)),
    );
    if (handled.alerts.length > 0 || handled.wroteEvents) services.outbox.written();
    return { received: true, outcome: handled.outcome };
  } catch (error) {
    if (error instanceof ApiError || error instanceof GroupCommitOverloaded || isUnavailableError(error)) throw error;
    // Never a 500 to Stripe: it retries a 503, and the retry is handled afresh (nothing was written).
    services.log.error({ err: error, stripe_event: event.id, type: event.type }, 'stripe event not handled; Stripe will retry');
    throw new ApiError('billing_unavailable', 'The event could not be handled now; nothing was written. Stripe retries it.');
  }
}

/** The card a paid checkout used: its PaymentIntent's payment method, read from Stripe; null when it cannot be. */
async function cardOf(services: Pick<Resources, 'log'>, payments: PaymentGateway, event: PaymentEvent): Promise<SavedCard | null> {
  if (event.kind !== 'checkout' || !event.checkout.paid || !event.checkout.paymentIntentId) return null;
  try {
    return await payments.cardOfPayment(event.checkout.paymentIntentId);
  } catch (error) {
    services.log.warn(
      { stripe_event: event.id, stripe: paymentFailureOf(error) },
      'card of a checkout not read; credits granted without saving it',
    );
    return null;
  }
}

async function handleEvent(
  tx: Tx,
  services: Pick<Resources, 'config' | 'clock' | 'log'>,
  event: PaymentEvent,
  card: SavedCard | null,
  subscription: ProviderSubscription | null,
): Promise<Handled> {
  const claimed = await tx
    .insertInto('stripe_events')
    .values({ id: event.id, type: event.type, outcome: 'handled', payment_id: null })
    .onConflict((oc) => oc.column('id').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!claimed) return { outcome: 'duplicate', paymentId: null, alerts: [] };
  const now = services.clock.now();
  const handled = isSubscriptionEvent(event)
    ? await handleSubscriptionEvent(tx, services, event, subscription, now)
    : await dispatch(tx, services, event, card, now);
  await tx
    .updateTable('stripe_events')
    .set({ outcome: handled.outcome, payment_id: handled.paymentId })
    .where('id', '=', event.id)
    .execute();
  await recordBillingAlerts(tx, services.config, now, handled.alerts);
  return handled;
}

/** The payment events of HANDLED_TYPES (a checkout's, an off-session charge's, a charge's refund or dispute); the subscription events are subscription-events.ts's. */
function dispatch(
  tx: Tx,
  services: Pick<Resources, 'config' | 'log'>,
  event: PaymentEvent,
  card: SavedCard | null,
  now: Date,
): Promise<Handled> {
  switch (event.kind) {
    case 'checkout':
      return checkoutPaid(tx, services, event.checkout, card, now);
    case 'payment':
      if (event.type === 'payment_intent.succeeded') return rechargeSucceeded(tx, event.payment, now);
      return event.type === 'payment_intent.payment_failed' ? rechargeFailed(tx, services, event.payment, now) : Promise.resolve(ignored);
    case 'refund':
    case 'dispute':
      return chargeMoney(tx, event, now);
    default:
      return Promise.resolve(ignored);
  }
}

/**
 * The checkout's payment row, or one made from the session's metadata when the checkout's own
 * insert never committed (the session was made, then the process stopped). A session the
 * service did not make (no known workspace or pack in its metadata) has none.
 */
async function checkoutPayment(
  tx: Tx,
  services: Pick<Resources, 'config'>,
  session: CompletedCheckout,
  now: Date,
): Promise<BillingPaymentRow | undefined> {
  const found = await tx.selectFrom('billing_payments').selectAll().where('checkout_session_id', '=', session.id).executeTakeFirst();
  if (found) return found;
  const workspaceId = session.metadata.workspace_id ?? session.reference;
  const pack = findPack(services.config, session.metadata.pack_id);
  if (!workspaceId || !pack) return undefined;
  const workspace = await tx.selectFrom('workspaces').select('id').where('id', '=', workspaceId).executeTakeFirst();
  if (!workspace) return undefined;
  const paymentId = session.metadata.payment_id?.startsWith('pay_') ? session.metadata.payment_id : newId('pay');
  await tx
    .insertInto('billing_payments')
    .values(checkoutPaymentRow(paymentId, workspaceId, pack, session.id, session.createdAt ?? now, now))
    .onConflict((oc) => oc.doNothing())
    .execute();
  return tx.selectFrom('billing_payments').selectAll().where('checkout_session_id', '=', session.id).executeTakeFirst();
}

/**
 * Moves a pending payment to paid (or from a failed auto-recharge whose PaymentIntent succeeded
 * after all: the money arrived) and grants its credits, under the balance lock taken first (the
 * order admission locks in). Null when another event granted it already. A refund or dispute
 * that arrived before (kept in stripe_held_events, or a refund recorded on the pending row) is
 * applied in the same transaction: a fully refunded payment ends `refunded` with nothing left
 * granted, and its `billing.payment_succeeded` is not sent.
 */
async function payAndGrant(
  tx: Tx,
  payment: BillingPaymentRow,
  paymentIntentId: string | null,
  now: Date,
): Promise<{ row: BillingPaymentRow; available: number; alerts: BillingAlert[] } | null> {
  await lockWorkspaceBalance(tx, payment.workspace_id, now);
  const from = payment.kind === 'auto_recharge' ? (['pending', 'failed'] as const) : (['pending'] as const);
  const row = await tx
    .updateTable('billing_payments')
    .set((eb) => ({
      status: 'paid',
      paid_at: now,
      payment_intent_id: paymentIntentId ? eb.fn.coalesce('payment_intent_id', eb.val(paymentIntentId)) : eb.ref('payment_intent_id'),
      failure_message: null,
      locked_until: null,
      next_attempt_at: null,
      updated_at: now,
    }))
    .where('id', '=', payment.id)
    .where('status', 'in', [...from])
    .returningAll()
    .executeTakeFirst();
  if (!row) return null;
  const granted = await grantPurchase(tx, row, now);
  const early = await applyEarlyReversals(tx, row, now);
  if (!early) return { row, available: granted, alerts: [] };
  const after = await tx.selectFrom('billing_payments').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
  const { balance, quota } = await lockWorkspaceBalance(tx, row.workspace_id, now);
  return { row: after, available: availableOf(balance, { monthly_quota: quota }, now).total, alerts: early };
}

/** The reversals that overtook a grant, applied right after it; null when there were none. */
async function applyEarlyReversals(tx: Tx, row: BillingPaymentRow, now: Date): Promise<BillingAlert[] | null> {
  const alerts: BillingAlert[] = [];
  let any = false;
  // A refund recorded on the row while it was pending (before held events existed).
  if (row.amount_refunded > 0) {
    any = true;
    const refund = await reverseRefund(tx, row, row.amount_refunded, now);
    if (refund)
      alerts.push(
        paymentAlert('billing.payment_refunded', refund.payment, refund.availableCredits, refundMessage(refund.payment), 'refund'),
      );
  }
  const held = await applyHeldEvents(tx, row, now);
  if (held.applied) any = true;
  alerts.push(...held.alerts);
  return any ? alerts : null;
}

function refundMessage(row: BillingPaymentRow): string {
  return `${formatAmount(row.amount_refunded, row.currency)} of ${formatAmount(row.amount, row.currency)} refunded: ${row.refunded_credits.toLocaleString('en-US')} purchased credits reversed in all.`;
}

/** A refund or dispute event: applied to its granted payment, or kept for the grant (disputes.ts). */
async function chargeMoney(tx: Tx, event: PaymentEvent, now: Date): Promise<Handled> {
  const result = await chargeMoneyEvent(tx, event, now);
  if (!result) return ignored;
  return { outcome: 'handled', paymentId: result.paymentId, alerts: result.alerts };
}

/** Records a payment whose amount or currency differs from its pack's: nothing is granted. */
async function mismatch(tx: Tx, payment: BillingPaymentRow, paymentIntentId: string | null, now: Date, message: string): Promise<void> {
  await tx
    .updateTable('billing_payments')
    .set((eb) => ({
      status: 'mismatch',
      failure_message: message,
      payment_intent_id: paymentIntentId ? eb.fn.coalesce('payment_intent_id', eb.val(paymentIntentId)) : eb.ref('payment_intent_id'),
      updated_at: now,
    }))
    .where('id', '=', payment.id)
    .where('status', '=', 'pending')
    .execute();
}

/** The events of a grant: payment_succeeded (unless a reversal that overtook it left nothing granted), then the reversals'. */
function grantAlerts(paid: { row: BillingPaymentRow; available: number; alerts: BillingAlert[] }): BillingAlert[] {
  const nothingLeft = paid.alerts.length > 0 && paid.row.status === 'refunded';
  return [
    ...(nothingLeft ? [] : [paymentAlert('billing.payment_succeeded', paid.row, paid.available, succeededMessage(paid.row))]),
    ...paid.alerts,
  ];
}

function succeededMessage(row: BillingPaymentRow): string {
  const what = row.kind === 'auto_recharge' ? 'Auto-recharge' : 'Payment';
  return `${what} of ${formatAmount(row.amount, row.currency)} received: ${row.credits.toLocaleString('en-US')} purchased credits added.`;
}

async function checkoutPaid(
  tx: Tx,
  services: Pick<Resources, 'config' | 'log'>,
  session: CompletedCheckout,
  card: SavedCard | null,
  now: Date,
): Promise<Handled> {
  if (!session.paid) return ignored;
  const payment = await checkoutPayment(tx, services, session, now);
  if (!payment) {
    services.log.warn({ checkout_session: session.id }, 'paid checkout session without a workspace or pack of this service; ignored');
    return ignored;
  }
  const intentId = session.paymentIntentId;
  const done: Handled = { outcome: 'handled', paymentId: payment.id, alerts: [] };
  if (payment.status !== 'pending') return done;
  if (session.amount !== payment.amount || (session.currency ?? '').toLowerCase() !== payment.currency) {
    const message = `Stripe reported ${session.amount ?? 'no amount'} ${session.currency ?? ''}, the pack costs ${payment.amount} ${payment.currency}.`;
    services.log.warn({ payment_id: payment.id, checkout_session: session.id }, `checkout amount mismatch: ${message}`);
    await mismatch(tx, payment, intentId, now, message);
    return done;
  }
  const paid = await payAndGrant(tx, payment, intentId, now);
  if (!paid) return done;
  await saveCustomer(tx, paid.row.workspace_id, session.customerId, card, now);
  done.alerts.push(...grantAlerts(paid));
  return done;
}

/** The customer a checkout paid as, and the card it paid with (auto-recharge charges it). */
async function saveCustomer(tx: Tx, workspaceId: string, customerId: string | null, card: SavedCard | null, now: Date): Promise<void> {
  const cardColumns = card ? { payment_method_id: card.paymentMethodId, card_brand: card.brand, card_last4: card.last4 } : {};
  if (customerId) {
    await tx
      .insertInto('billing_customers')
      .values({ workspace_id: workspaceId, stripe_customer_id: customerId, ...cardColumns, updated_at: now })
      .onConflict((oc) => oc.column('workspace_id').doUpdateSet({ ...cardColumns, updated_at: now }))
      .execute();
  } else if (card) {
    await tx
      .updateTable('billing_customers')
      .set({ ...cardColumns, updated_at: now })
      .where('workspace_id', '=', workspaceId)
      .execute();
  }
}

/** An auto-recharge's payment, by its PaymentIntent or (when the charger stopped before storing it) the payment ID in its metadata. */
async function rechargePayment(tx: Tx, intent: PaymentOutcome): Promise<BillingPaymentRow | undefined> {
  if (intent.metadata.kind !== 'auto_recharge') return undefined;
  const byIntent = await tx.selectFrom('billing_payments').selectAll().where('payment_intent_id', '=', intent.id).executeTakeFirst();
  if (byIntent) return byIntent;
  const paymentId = intent.metadata.payment_id;
  if (!paymentId) return undefined;
  return tx
    .selectFrom('billing_payments')
    .selectAll()
    .where('id', '=', paymentId)
    .where('kind', '=', 'auto_recharge')
    .where('workspace_id', '=', intent.metadata.workspace_id ?? '')
    .executeTakeFirst();
}

async function rechargeSucceeded(tx: Tx, intent: PaymentOutcome, now: Date): Promise<Handled> {
  // A checkout's PaymentIntent is granted by its checkout.session event.
  const payment = await rechargePayment(tx, intent);
  if (!payment) return ignored;
  const done: Handled = { outcome: 'handled', paymentId: payment.id, alerts: [] };
  if (intent.amount !== payment.amount || intent.currency.toLowerCase() !== payment.currency) {
    await mismatch(
      tx,
      payment,
      intent.id,
      now,
      `Stripe reported ${intent.amount} ${intent.currency}, the pack costs ${payment.amount} ${payment.currency}.`,
    );
    return done;
  }
  const paid = await payAndGrant(tx, payment, intent.id, now);
  if (paid) done.alerts.push(...grantAlerts(paid));
  return done;
}

async function rechargeFailed(tx: Tx, services: Pick<Resources, 'config'>, intent: PaymentOutcome, now: Date): Promise<Handled> {
  const payment = await rechargePayment(tx, intent);
  if (!payment) return ignored;
  const reason = intent.failureMessage ?? 'The card was declined.';
  // failRecharge writes its own event (when it is the first to fail the payment).
  const wroteEvents = await failRecharge(tx, services.config, now, payment.id, reason, intent.id);
  return { outcome: 'handled', paymentId: payment.id, alerts: [], wroteEvents };
}
