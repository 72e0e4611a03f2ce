import type { Logger } from 'pino';
import type { components } from '@sdx/contract';
import type { Db } from '@sdx/db';
import { type Actor, recordAudit } from '../audit/audit';
import { newId } from '../ids';
import type { Resources, Tenant } from '../resources';
import { packName, packOrThrow } from './packs';
import { checkoutPaymentRow } from './payments';
import { billingUnavailable, requirePayments } from './availability';
import { type HostedCheckout, type PaymentGateway, paymentFailureOf } from '../payment-gateway';

/**
 * POST /v1/billing/checkout (extensions-2.md 1): a Stripe Checkout Session for a pack, and the
 * `pending` payment it will pay. No Stripe call runs inside a transaction: the customer and the
 * session are made first, then the payment row and the audit entry commit together. A crash
 * between the two leaves a session without its row; its webhook makes the row from the
 * session's metadata (stripe-events.ts), so a paid session is never lost.
 */
export type CheckoutRequest = components['schemas']['CheckoutRequest'];
export type CheckoutResponse = components['schemas']['CheckoutResponse'];

/**
 * The workspace's Stripe customer, made once. Two checkouts at the same moment both ask Stripe
 * with the Idempotency-Key `customer-<workspace>`, so Stripe makes one customer and answers both
 * with it (within its 24-hour key window; after that the row below exists already); the first
 * row stored wins and a later one reads it.
 */
export async function ensureCustomer(db: Db, payments: PaymentGateway, workspaceId: string, log: Logger): Promise<string> {
  const existing = await db
    .selectFrom('billing_customers')
    .select('stripe_customer_id')
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  if (existing) return existing.stripe_customer_id;
  let customerId: string;
  try {
    customerId = await payments.createCustomer({ workspaceId, idempotencyKey: `customer-${workspaceId}` });
  } catch (error) {
    log.warn({ workspace_id: workspaceId, stripe: paymentFailureOf(error) }, 'stripe customer not created');
    throw billingUnavailable(error);
  }
  await db
    .insertInto('billing_customers')
    .values({ workspace_id: workspaceId, stripe_customer_id: customerId })
    // Either unique key may meet the other checkout's row first (the same customer for the same workspace).
    .onConflict((oc) => oc.doNothing())
    .execute();
  const stored = await db
    .selectFrom('billing_customers')
    .select('stripe_customer_id')
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirstOrThrow();
  return stored.stripe_customer_id;
}

/** The buying workspace's Billing page in the console, where Stripe sends the buyer back by default. */
function billingPage(appUrl: string, workspaceId: string, outcome: 'success' | 'cancelled'): string {
  return `${appUrl.replace(/\/+$/, '')}/console/w/${encodeURIComponent(workspaceId)}/billing?checkout=${outcome}`;
}

export async function createCheckout(
  services: Pick<Resources, 'db' | 'config' | 'clock' | 'log' | 'payments'>,
  tenant: Tenant,
  input: CheckoutRequest,
  actor: Actor,
): Promise<CheckoutResponse> {
  const payments = requirePayments(services);
  const pack = packOrThrow(services.config, input.pack_id);
  const workspaceId = tenant.workspace.id;
  const customerId = await ensureCustomer(services.db, payments, workspaceId, services.log);
  const paymentId = newId('pay');
  let session: HostedCheckout;
  try {
    session = await payments.createPackCheckout({
      customerId,
      workspaceId,
      item: { name: packName(pack), amount: pack.amount, currency: pack.currency },
      metadata: { workspace_id: workspaceId, pack_id: pack.id, payment_id: paymentId },
      successUrl: input.success_url ?? billingPage(services.config.appUrl, workspaceId, 'success'),
      cancelUrl: input.cancel_url ?? billingPage(services.config.appUrl, workspaceId, 'cancelled'),
      idempotencyKey: `checkout-${paymentId}`,
    });
  } catch (error) {
    services.log.warn({ workspace_id: workspaceId, stripe: paymentFailureOf(error) }, 'stripe checkout session not created');
    throw billingUnavailable(error);
  }
  const now = services.clock.now();
  await services.db.transaction().execute(async (tx) => {
    await tx
      .insertInto('billing_payments')
      .values(checkoutPaymentRow(paymentId, workspaceId, pack, session.id, now, now))
      // A webhook quicker than this commit made the row from the session's metadata already.
      .onConflict((oc) => oc.doNothing())
      .execute();
    await recordAudit(tx, {
      workspaceId,
      action: 'billing.checkout_created',
      actor,
      targetType: 'payment',
      targetId: paymentId,
      data: { pack_id: pack.id, credits: pack.credits, amount: pack.amount, currency: pack.currency, checkout_id: session.id },
    });
  });
  return { checkout_id: session.id, url: session.url };
}
