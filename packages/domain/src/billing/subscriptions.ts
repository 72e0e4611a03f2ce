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
import { billingUnavailable, requireBilling, type Stripe, stripeFailureOf } from './stripe';

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
export function scheduledPlanOf(config: Pick<AppConfig, 'plans'>, row: Pick<BillingSubscriptionRow, 'plan_id' | 'price_plan_id' | 'status'>): string | null {
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
  const rows = await db.selectFrom('billing_subscriptions').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at', 'desc').limit(20).execute();
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
export async function ensurePlanPrice(db: Db, stripe: Stripe, plan: Plan, log: Resources['log']): Promise<string> {
  const key = { plan_id: plan.id, amount: plan.amount, currency: plan.currency };
  const stored = await db.selectFrom('billing_prices').select('stripe_price_id').where('plan_id', '=', key.plan_id).where('amount', '=', key.amount).where('currency', '=', key.currency).executeTakeFirst();
  if (stored) return stored.stripe_price_id;
  let price: Stripe.Price;
  try {
    price = await stripe.prices.create(
      { currency: plan.currency, unit_amount: plan.amount, recurring: { interval: 'month' }, product_data: { name: planProductName(plan) }, metadata: { plan_id: plan.id } },
      { idempotencyKey: `price-${plan.id}-${plan.amount}-${plan.currency}` },
    );
  } catch (error) {
    log.warn({ plan_id: plan.id, stripe: stripeFailureOf(error) }, 'stripe price not created');
    throw billingUnavailable(error);
  }
  await db.insertInto('billing_prices').values({ ...key, stripe_price_id: price.id }).onConflict((oc) => oc.doNothing()).execute();
  const row = await db.selectFrom('billing_prices').select('stripe_price_id').where('plan_id', '=', key.plan_id).where('amount', '=', key.amount).where('currency', '=', key.currency).executeTakeFirstOrThrow();
  return row.stripe_price_id;
}

type Services = Pick<Resources, 'db' | 'config' | 'clock' | 'log'>;

/** POST /v1/billing/subscription: 201 a Checkout Session for a new subscription, or 200 the live subscription changed to the plan. */
export async function createSubscription(
  services: Services,
  stripeClient: Stripe | null,
  tenant: Tenant,
  input: SubscriptionRequest,
  actor: Actor,
): Promise<{ status: 201; body: components['schemas']['CheckoutResponse'] } | { status: 200; body: Subscription }> {
  const { stripe } = requireBilling(stripeClient, services.config);
  const plan = paidPlanOrThrow(services.config, input.plan_id);
  const workspaceId = tenant.workspace.id;
  const live = await liveSubscription(services.db, workspaceId);
  if (live) return { status: 200, body: await changePlan(services, stripe, live, plan, actor) };
  const customer = await ensureCustomer(services.db, stripe, workspaceId, services.log);
  let session: Stripe.Checkout.Session;
  try {
    session = await stripe.checkout.sessions.create(
      {
        mode: 'subscription',
        customer,
        line_items: [
          {
            price_data: { currency: plan.currency, unit_amount: plan.amount, recurring: { interval: 'month' }, product_data: { name: planProductName(plan) } },
            quantity: 1,
          },
        ],
        subscription_data: { metadata: { workspace_id: workspaceId, plan_id: plan.id } },
        success_url: input.success_url ?? billingPage(services.config.appUrl, workspaceId, '?subscription=success'),
        cancel_url: input.cancel_url ?? billingPage(services.config.appUrl, workspaceId, '?subscription=cancelled'),
      },
      { idempotencyKey: `subscription-checkout-${newId('pay')}` },
    );
  } catch (error) {
    services.log.warn({ workspace_id: workspaceId, stripe: stripeFailureOf(error) }, 'stripe subscription checkout session not created');
    throw billingUnavailable(error);
  }
  await services.db.transaction().execute((tx) =>
    recordAudit(tx, {
      workspaceId,
      action: 'billing.subscription_checkout_created',
      actor,
      targetType: 'workspace',
      targetId: workspaceId,
      data: { plan_id: plan.id, amount: plan.amount, currency: plan.currency, monthly_credits: plan.monthly_credits, checkout_id: session.id },
    }),
  );
  return { status: 201, body: { checkout_id: session.id, url: session.url ?? '' } };
}

/** The subscription's one item (its price is what a change replaces), from the row or read from Stripe. */
async function itemOf(stripe: Stripe, row: BillingSubscriptionRow): Promise<string> {
  if (row.item_id) return row.item_id;
  const subscription = await stripe.subscriptions.retrieve(row.id);
  const item = subscription.items.data[0];
  if (!item) throw new Error(`subscription ${row.id} has no item`);
  return item.id;
}

/**
 * A plan change of a live subscription, compared with the plan it is priced at now. Dearer: the
 * price now, the prorated difference invoiced at once (`always_invoice`); the quota follows that
 * invoice. Cheaper: the price now without proration (`none`); the plan in force stays, shown
 * with `scheduled_plan_id`, until the next invoice is paid. Back to the plan in force (a
 * downgrade taken back): the price again, nothing prorated. The plan it is priced at already:
 * nothing changes.
 */
async function changePlan(services: Services, stripe: Stripe, live: BillingSubscriptionRow, plan: Plan, actor: Actor): Promise<Subscription> {
  const priced = planOf(services.config, live.price_plan_id ?? live.plan_id);
  if (plan.id === priced.id) return renderSubscription(services.config, live);
  // Back to the plan in force (a scheduled downgrade taken back): its period is paid for already, so nothing is prorated.
  const upgrade = plan.id !== live.plan_id && isUpgrade(priced, plan);
  const proration = upgrade ? 'always_invoice' : 'none';
  const price = await ensurePlanPrice(services.db, stripe, plan, services.log);
  let updated: Stripe.Subscription;
  try {
    updated = await stripe.subscriptions.update(
      live.id,
      { items: [{ id: await itemOf(stripe, live), price }], metadata: { plan_id: plan.id }, proration_behavior: proration },
      { idempotencyKey: `subscription-change-${newId('evt')}` },
    );
  } catch (error) {
    services.log.warn({ subscription: live.id, stripe: stripeFailureOf(error) }, 'stripe subscription not changed');
    throw billingUnavailable(error);
  }
  const now = services.clock.now();
  return services.db.transaction().execute(async (tx) => {
    const row = await tx
      .updateTable('billing_subscriptions')
      .set({ price_plan_id: plan.id, item_id: updated.items.data[0]?.id ?? live.item_id, ...mirroredPeriod(updated), updated_at: now })
      .where('id', '=', live.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await recordAudit(tx, {
      workspaceId: live.workspace_id,
      action: 'billing.subscription_changed',
      actor,
      targetType: 'subscription',
      targetId: live.id,
      data: { from_plan_id: priced.id, plan_id: plan.id, kind: upgrade ? 'upgrade' : 'downgrade', proration_behavior: proration, amount: plan.amount, currency: plan.currency },
    });
    return renderSubscription(services.config, row);
  });
}

/** The period end and cancellation of a Stripe subscription (the period on its item in newer API versions, on itself in older ones). */
export function mirroredPeriod(subscription: Stripe.Subscription): { current_period_end?: Date; cancel_at_period_end: boolean } {
  const legacy = (subscription as unknown as { current_period_end?: number }).current_period_end;
  const end = subscription.items?.data?.[0]?.current_period_end ?? legacy;
  return { ...(typeof end === 'number' ? { current_period_end: new Date(end * 1000) } : {}), cancel_at_period_end: Boolean(subscription.cancel_at_period_end) };
}

/** DELETE /v1/billing/subscription: the live subscription ends at the end of its period. */
export async function cancelSubscription(services: Services, stripeClient: Stripe | null, tenant: Tenant, actor: Actor): Promise<Subscription> {
  const { stripe } = requireBilling(stripeClient, services.config);
  const live = await liveSubscription(services.db, tenant.workspace.id);
  if (!live) throw new ApiError('subscription_not_found', 'This workspace has no live subscription.');
  let updated: Stripe.Subscription;
  try {
    updated = await stripe.subscriptions.update(live.id, { cancel_at_period_end: true }, { idempotencyKey: `subscription-cancel-${newId('evt')}` });
  } catch (error) {
    services.log.warn({ subscription: live.id, stripe: stripeFailureOf(error) }, 'stripe subscription not cancelled');
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
export async function createBillingPortal(services: Services, stripeClient: Stripe | null, tenant: Tenant, input: BillingPortalRequest | undefined): Promise<{ url: string }> {
  const { stripe } = requireBilling(stripeClient, services.config);
  const workspaceId = tenant.workspace.id;
  const customer = await ensureCustomer(services.db, stripe, workspaceId, services.log);
  try {
    const session = await stripe.billingPortal.sessions.create({ customer, return_url: input?.return_url ?? billingPage(services.config.appUrl, workspaceId) });
    return { url: session.url };
  } catch (error) {
    services.log.warn({ workspace_id: workspaceId, stripe: stripeFailureOf(error) }, 'stripe billing portal session not created');
    throw billingUnavailable(error);
  }
}

/** GET /v1/billing/invoices: newest first by when Stripe made them; `starting_after` must be an invoice of the workspace. */
export async function listInvoices(db: Executor, workspaceId: string, page: PageRequest): Promise<Page<BillingInvoiceRow>> {
  let query = db.selectFrom('billing_invoices').selectAll().where('workspace_id', '=', workspaceId);
  if (page.startingAfter !== null) {
    const after = await db.selectFrom('billing_invoices').select(['id', 'created_at']).where('id', '=', page.startingAfter).where('workspace_id', '=', workspaceId).executeTakeFirst();
    if (!after) {
      throw new RequestValidationError([
        { loc: ['query', 'starting_after'], msg: `No invoice ${page.startingAfter} in this workspace to start after`, type: 'value_error', input: page.startingAfter },
      ]);
    }
    query = query.where((eb) => eb.or([eb('created_at', '<', after.created_at), eb.and([eb('created_at', '=', after.created_at), eb('id', '<', after.id)])]));
  }
  const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit + 1).execute();
  return pageOf(rows, page.limit);
}
