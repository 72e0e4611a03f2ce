import type { AppConfig } from '@sdx/config';
import type { components } from '@sdx/contract';
import type { BillingInvoiceRow, BillingSubscriptionRow, Db, Executor, SubscriptionStatus, Tx } from '@sdx/db';
import { type Actor, recordAudit } from '../audit/audit';
import { ApiError, RequestValidationError } from '../errors';
import { newId } from '../ids';
import { type Page, type PageRequest, pageOf } from '../paging';
import type { Resources, Tenant } from '../resources';
import { ensureCustomer } from './checkout';
import { isUpgrade, type Plan, planOf, paidPlanOrThrow } from './plans';
import { billingUnavailable, requirePayments } from './availability';
import { type HostedCheckout, type PaymentGateway, paymentFailureOf, type ProviderSubscription } from '../payment-gateway';

/**
 * Subscribing to a monthly plan, changing and cancelling it, the billing portal and the
 * invoices (extensions-3.md 2). As checkout.ts, no Stripe call runs inside a transaction: the
 * call is made, then what it answered is recorded with its audit entry. The plan itself (quota
 * and limits) changes only when Stripe says an invoice was paid (subscription-events.ts).
 */
export type Subscription = NonNullable<components['schemas']['Subscription']>;
export type SubscriptionRequest = components['schemas']['SubscriptionRequest'];
export type BillingPortalRequest = components['schemas']['BillingPortalRequest'];
export type Invoice = components['schemas']['Invoice'];

/** The statuses in which a subscription is live: a change or a cancellation goes to it, not to a new checkout. */
export const LIVE_STATUSES: readonly SubscriptionStatus[] = ['active', 'past_due'];

/**
 * `scheduled_plan_id`: the plan the subscription is priced at when it is cheaper than the plan in
 * force (a downgrade, which the next paid invoice brings); null otherwise.
 */
export function scheduledPlanOf(
  config: Pick<AppConfig, 'plans'>,
  row: Pick<BillingSubscriptionRow, 'plan_id' | 'price_plan_id' | 'status'>,
): string | null {
  if (!row.price_plan_id || row.price_plan_id === row.plan_id || row.status === 'canceled') return null;
  return isUpgrade(planOf(config, row.plan_id), planOf(config, row.price_plan_id)) ? null : row.price_plan_id;
}

export function renderSubscription(config: Pick<AppConfig, 'plans'>, row: BillingSubscriptionRow): Subscription {
  return {
    id: row.id,
    plan_id: row.plan_id,
    status: row.status,
    current_period_end: row.current_period_end ? row.current_period_end.toISOString() : null,
    cancel_at_period_end: row.cancel_at_period_end,
    scheduled_plan_id: scheduledPlanOf(config, row),
  };
}

export function renderInvoice(row: BillingInvoiceRow): Invoice {
  return {
    id: row.id,
    number: row.number,
    status: row.status,
    amount_due: row.amount_due,
    amount_paid: row.amount_paid,
    currency: row.currency,
    period_start: row.period_start ? row.period_start.toISOString() : null,
    period_end: row.period_end ? row.period_end.toISOString() : null,
    hosted_invoice_url: row.hosted_invoice_url,
    created_at: row.created_at.toISOString(),
  };
}

/** The workspace's subscription as GET /v1/billing shows it: the live one, else the newest; undefined when it never subscribed. */
export async function currentSubscription(db: Executor, workspaceId: string): Promise<BillingSubscriptionRow | undefined> {
  const rows = await db
    .selectFrom('billing_subscriptions')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .orderBy('created_at', 'desc')
    .limit(20)
    .execute();
  return rows.find((r) => LIVE_STATUSES.includes(r.status)) ?? rows[0];
}

async function liveSubscription(db: Executor, workspaceId: string): Promise<BillingSubscriptionRow | undefined> {
  const row = await currentSubscription(db, workspaceId);
  return row && LIVE_STATUSES.includes(row.status) ? row : undefined;
}

/** The console's Billing page of the workspace, where Stripe sends the member back by default. */
function billingPage(appUrl: string, workspaceId: string, query = ''): string {
  return `${appUrl.replace(/\/+$/, '')}/console/w/${encodeURIComponent(workspaceId)}/billing${query}`;
}

/** The name of a plan's product on Stripe's pages and invoices. */
export function planProductName(plan: Plan): string {
  return `${plan.name} plan: ${plan.monthly_credits.toLocaleString('en-US')} credits a month`;
}

/**
 * The Stripe Price of a plan (monthly, at its amount and currency), created once with POST
 * /v1/prices and reused: the row billing_prices keeps it; two requests at once ask Stripe with
 * the same Idempotency-Key, so one Price is made.
 */
export async function ensurePlanPrice(db: Db, payments: PaymentGateway, plan: Plan, log: Resources['log']): Promise<string> {
  const key = { plan_id: plan.id, amount: plan.amount, currency: plan.currency };
  const stored = await db
    .selectFrom('billing_prices')
    .select('stripe_price_id')
    .where('plan_id', '=', key.plan_id)
    .where('amount', '=', key.amount)
    .where('currency', '=', key.currency)
    .executeTakeFirst();
  if (stored) return stored.stripe_price_id;
  let priceId: string;
  try {
    priceId = await payments.createMonthlyPrice({
      item: { name: planProductName(plan), amount: plan.amount, currency: plan.currency },
      metadata: { plan_id: plan.id },
      idempotencyKey: `price-${plan.id}-${plan.amount}-${plan.currency}`,
    });
  } catch (error) {
    log.warn({ plan_id: plan.id, stripe: paymentFailureOf(error) }, 'stripe price not created');
    throw billingUnavailable(error);
  }
  await db
    .insertInto('billing_prices')
    .values({ ...key, stripe_price_id: priceId })
    .onConflict((oc) => oc.doNothing())
    .execute();
  const row = await db
    .selectFrom('billing_prices')
    .select('stripe_price_id')
    .where('plan_id', '=', key.plan_id)
    .where('amount', '=', key.amount)
    .where('currency', '=', key.currency)
    .executeTakeFirstOrThrow();
  return row.stripe_price_id;
}

type Services = Pick<Resources, 'db' | 'config' | 'clock' | 'log' | 'payments'>;

/** POST /v1/billing/subscription: 201 a Checkout Session for a new subscription, or 200 the live subscription changed to the plan. */
export async function createSubscription(
  services: Services,
  tenant: Tenant,
  input: SubscriptionRequest,
  actor: Actor,
): Promise<{ status: 201; body: components['schemas']['CheckoutResponse'] } | { status: 200; body: Subscription }> {
  const payments = requirePayments(services);
  const plan = paidPlanOrThrow(services.config, input.plan_id);
  const workspaceId = tenant.workspace.id;
  const live = await liveSubscription(services.db, workspaceId);
  if (live) return { status: 200, body: await changePlan(services, payments, live, plan, actor) };
  const customerId = await ensureCustomer(services.db, payments, workspaceId, services.log);
  let session: HostedCheckout;
  try {
    session = await payments.createSubscriptionCheckout({
      customerId,
      item: { name: planProductName(plan), amount: plan.amount, currency: plan.currency },
      metadata: { workspace_id: workspaceId, plan_id: plan.id },
      successUrl: input.success_url ?? billingPage(services.config.appUrl, workspaceId, '?subscription=success'),
      cancelUrl: input.cancel_url ?? billingPage(services.config.appUrl, workspaceId, '?subscription=cancelled'),
      idempotencyKey: `subscription-checkout-${newId('pay')}`,
    });
  } catch (error) {
    services.log.warn({ workspace_id: workspaceId, stripe: paymentFailureOf(error) }, 'stripe subscription checkout session not created');
    throw billingUnavailable(error);
  }
  await services.db.transaction().execute((tx) =>
    recordAudit(tx, {
      workspaceId,
      action: 'billing.subscription_checkout_created',
      actor,
      targetType: 'workspace',
      targetId: workspaceId,
      data: {
        plan_id: plan.id,
        amount: plan.amount,
        currency: plan.currency,
        monthly_credits: plan.monthly_credits,
        checkout_id: session.id,
      },
    }),
  );
  return { status: 201, body: { checkout_id: session.id, url: session.url } };
}

/** The subscription's one item (its price is what a change replaces), from the row or read from Stripe. */
async function itemOf(payments: PaymentGateway, row: BillingSubscriptionRow): Promise<string> {
  if (row.item_id) return row.item_id;
  const subscription = await payments.subscription(row.id);
  if (!subscription.itemId) throw new Error(`subscription ${row.id} has no item`);
  return subscription.itemId;
}

/**
 * A plan change of a live subscription, compared with the plan it is priced at now. Dearer: the
 * price now, the prorated difference invoiced at once (`always_invoice`); the quota follows that
 * invoice. Cheaper: the price now without proration (`none`); the plan in force stays, shown
 * with `scheduled_plan_id`, until the next invoice is paid. Back to the plan in force (a
 * downgrade taken back): the price again, nothing prorated. The plan it is priced at already:
 * nothing changes.
 */
async function changePlan(
  services: Services,
  payments: PaymentGateway,
  live: BillingSubscriptionRow,
  plan: Plan,
  actor: Actor,
): Promise<Subscription> {
  const priced = planOf(services.config, live.price_plan_id ?? live.plan_id);
  if (plan.id === priced.id) return renderSubscription(services.config, live);
  // Back to the plan in force (a scheduled downgrade taken back): its period is paid for already, so nothing is prorated.
  const upgrade = plan.id !== live.plan_id && isUpgrade(priced, plan);
  const proration = upgrade ? 'always_invoice' : 'none';
  const priceId = await ensurePlanPrice(services.db, payments, plan, services.log);
  let updated: ProviderSubscription;
  try {
    updated = await payments.changeSubscriptionPrice(live.id, {
      itemId: await itemOf(payments, live),
      priceId,
      metadata: { plan_id: plan.id },
      proration,
      idempotencyKey: `subscription-change-${newId('evt')}`,
    });
  } catch (error) {
    services.log.warn({ subscription: live.id, stripe: paymentFailureOf(error) }, 'stripe subscription not changed');
    throw billingUnavailable(error);
  }
  const now = services.clock.now();
  return services.db.transaction().execute(async (tx) => {
    const row = await tx
      .updateTable('billing_subscriptions')
      .set({ price_plan_id: plan.id, item_id: updated.itemId ?? live.item_id, ...mirroredPeriod(updated), updated_at: now })
      .where('id', '=', live.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordAudit(tx, {
      workspaceId: live.workspace_id,
      action: 'billing.subscription_changed',
      actor,
      targetType: 'subscription',
      targetId: live.id,
      data: {
        from_plan_id: priced.id,
        plan_id: plan.id,
        kind: upgrade ? 'upgrade' : 'downgrade',
        proration_behavior: proration,
        amount: plan.amount,
        currency: plan.currency,
      },
    });
    return renderSubscription(services.config, row);
  });
}

/** The period end (when the provider gives one) and cancellation of a subscription, as its row keeps them. */
export function mirroredPeriod(subscription: ProviderSubscription): { current_period_end?: Date; cancel_at_period_end: boolean } {
  return {
    ...(subscription.currentPeriodEnd ? { current_period_end: subscription.currentPeriodEnd } : {}),
    cancel_at_period_end: subscription.cancelAtPeriodEnd,
  };
}

/** DELETE /v1/billing/subscription: the live subscription ends at the end of its period. */
export async function cancelSubscription(services: Services, tenant: Tenant, actor: Actor): Promise<Subscription> {
  const payments = requirePayments(services);
  const live = await liveSubscription(services.db, tenant.workspace.id);
  if (!live) throw new ApiError('subscription_not_found', 'This workspace has no live subscription.');
  let updated: ProviderSubscription;
  try {
    updated = await payments.cancelAtPeriodEnd(live.id, `subscription-cancel-${newId('evt')}`);
  } catch (error) {
    services.log.warn({ subscription: live.id, stripe: paymentFailureOf(error) }, 'stripe subscription not cancelled');
    throw billingUnavailable(error);
  }
  const now = services.clock.now();
  return services.db.transaction().execute(async (tx: Tx) => {
    const row = await tx
      .updateTable('billing_subscriptions')
      .set({ ...mirroredPeriod(updated), cancel_at_period_end: true, updated_at: now })
      .where('id', '=', live.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordAudit(tx, {
      workspaceId: live.workspace_id,
      action: 'billing.subscription_cancelled',
      actor,
      targetType: 'subscription',
      targetId: live.id,
      data: { plan_id: live.plan_id, ends_at: row.current_period_end ? row.current_period_end.toISOString() : null },
    });
    return renderSubscription(services.config, row);
  });
}

/** POST /v1/billing/portal: a Stripe billing portal session for the workspace's customer. */
export async function createBillingPortal(
  services: Services,
  tenant: Tenant,
  input: BillingPortalRequest | undefined,
): Promise<{ url: string }> {
  const payments = requirePayments(services);
  const workspaceId = tenant.workspace.id;
  const customerId = await ensureCustomer(services.db, payments, workspaceId, services.log);
  try {
    return {
      url: await payments.createPortalSession({
        customerId,
        returnUrl: input?.return_url ?? billingPage(services.config.appUrl, workspaceId),
      }),
    };
  } catch (error) {
    services.log.warn({ workspace_id: workspaceId, stripe: paymentFailureOf(error) }, 'stripe billing portal session not created');
    throw billingUnavailable(error);
  }
}

/** GET /v1/billing/invoices: newest first by when Stripe made them; `starting_after` must be an invoice of the workspace. */
export async function listInvoices(db: Executor, workspaceId: string, page: PageRequest): Promise<Page<BillingInvoiceRow>> {
  let query = db.selectFrom('billing_invoices').selectAll().where('workspace_id', '=', workspaceId);
  if (page.startingAfter !== null) {
    const after = await db
      .selectFrom('billing_invoices')
      .select(['id', 'created_at'])
      .where('id', '=', page.startingAfter)
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst();
    if (!after) {
      throw new RequestValidationError([
        {
          loc: ['query', 'starting_after'],
          msg: `No invoice ${page.startingAfter} in this workspace to start after`,
          type: 'value_error',
          input: page.startingAfter,
        },
      ]);
    }
    query = query.where((eb) =>
      eb.or([eb('created_at', '<', after.created_at), eb.and([eb('created_at', '=', after.created_at), eb('id', '<', after.id)])]),
    );
  }
  const rows = await query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
  return pageOf(rows, page.limit);
}
