import type { AppConfig } from '@sdx/config';
import type { SubscriptionStatus, Tx } from '@sdx/db';
import { systemActor } from '../audit/audit';
import type { Resources } from '../resources';
import type { BillingAlert } from './alerts';
import { applyPlan, findPlan, freePlan, type PlanChange, readPlanRow } from './plans';
import { idOf, type Stripe, stripeFailureOf } from './stripe';
import { LIVE_STATUSES, mirroredPeriod, renderInvoice } from './subscriptions';
import { ApiError } from '../errors';

/**
 * Stripe's subscription events (extensions-3.md 2), handled inside the one transaction of
 * stripe-events.ts that claims the event ID first, so each is handled once:
 * - `checkout.session.completed` (mode subscription): the subscription recorded, as read with
 *   GET /v1/subscriptions/{id} before the transaction;
 * - `invoice.paid`: the invoice recorded; the workspace's plan becomes the plan of the
 *   subscription's metadata as the invoice carries it (`subscription_details` in older API
 *   versions, `parent.subscription_details` in newer ones; else the subscription read from
 *   Stripe), unless a later invoice set the plan already (the quota follows the last paid
 *   invoice, whatever order the events arrive in); the subscription is active again;
 * - `invoice.payment_failed`: the invoice recorded, the subscription past due since then (the
 *   grace period of grace.ts), `billing.invoice_payment_failed` and a mail;
 * - `customer.subscription.updated`: status, period end and cancellation mirrored (a past-due
 *   subscription becomes active only by a paid invoice; a cancelled one stays cancelled);
 * - `customer.subscription.deleted`: cancelled, and the workspace falls to free unless another
 *   of its subscriptions is live.
 */
export const SUBSCRIPTION_EVENT_TYPES = ['invoice.paid', 'invoice.payment_failed', 'customer.subscription.updated', 'customer.subscription.deleted'] as const;

/** The actor of changes Stripe's events make. */
export const STRIPE_ACTOR = systemActor('stripe');

interface Handled {
  outcome: 'handled' | 'ignored';
  paymentId: null;
  alerts: BillingAlert[];
}

const ignored: Handled = { outcome: 'ignored', paymentId: null, alerts: [] };

type Metadata = Record<string, string>;
type InvoiceShape = Stripe.Invoice & {
  subscription?: string | { id: string } | null;
  subscription_details?: { metadata?: Metadata | null } | null;
  parent?: { subscription_details?: { subscription?: string | { id: string } | null; metadata?: Metadata | null } | null } | null;
};

export function isSubscriptionEvent(event: Stripe.Event): boolean {
  if ((SUBSCRIPTION_EVENT_TYPES as readonly string[]).includes(event.type)) return true;
  return event.type === 'checkout.session.completed' && (event.data.object as Stripe.Checkout.Session).mode === 'subscription';
}

/** The subscription an invoice bills: `subscription` (older API versions) or `parent.subscription_details.subscription` (newer). */
export function invoiceSubscriptionId(invoice: InvoiceShape): string | null {
  return idOf(invoice.subscription ?? null) ?? idOf(invoice.parent?.subscription_details?.subscription ?? null);
}

/** The subscription's metadata when the invoice was made, in either shape. */
function invoiceMetadata(invoice: InvoiceShape): Metadata {
  return { ...(invoice.subscription_details?.metadata ?? {}), ...(invoice.parent?.subscription_details?.metadata ?? {}) };
}

/**
 * The subscription an event needs read from Stripe before its transaction opens: a subscription
 * checkout's, and an invoice's. A failure answers 503, so Stripe sends the event again.
 */
export async function prefetchSubscription(services: Pick<Resources, 'log'>, stripe: Stripe, event: Stripe.Event): Promise<Stripe.Subscription | null> {
  if (!isSubscriptionEvent(event)) return null;
  let id: string | null = null;
  if (event.type === 'checkout.session.completed') id = idOf((event.data.object as Stripe.Checkout.Session).subscription);
  else if (event.type.startsWith('invoice.')) id = invoiceSubscriptionId(event.data.object as InvoiceShape);
  if (!id) return null;
  try {
    return await stripe.subscriptions.retrieve(id);
  } catch (error) {
    services.log.warn({ stripe_event: event.id, subscription: id, stripe: stripeFailureOf(error) }, 'subscription of an event not read; Stripe will retry');
    throw new ApiError('billing_unavailable', 'The subscription could not be read from Stripe now; nothing was written. Stripe retries the event.');
  }
}

export function statusOf(stripeStatus: string): SubscriptionStatus {
  if (stripeStatus === 'active' || stripeStatus === 'trialing') return 'active';
  if (stripeStatus === 'past_due' || stripeStatus === 'unpaid') return 'past_due';
  if (stripeStatus === 'canceled' || stripeStatus === 'incomplete_expired') return 'canceled';
  return 'incomplete';
}

async function workspaceExists(tx: Tx, workspaceId: string | undefined | null): Promise<string | null> {
  if (!workspaceId) return null;
  const row = await tx.selectFrom('workspaces').select('id').where('id', '=', workspaceId).executeTakeFirst();
  return row?.id ?? null;
}

/**
 * The subscription's row, made or brought up to date from Stripe's object: a new row takes the
 * plan of its metadata; status, item, period end and cancellation follow Stripe, except that a
 * cancelled row stays cancelled and a past-due one becomes active only by a paid invoice.
 */
async function upsertSubscription(tx: Tx, subscription: Stripe.Subscription, workspaceId: string, now: Date): Promise<void> {
  const status = statusOf(subscription.status);
  const period = mirroredPeriod(subscription);
  const item = subscription.items?.data?.[0]?.id ?? null;
  const existing = await tx.selectFrom('billing_subscriptions').select(['status', 'past_due_since', 'item_id']).where('id', '=', subscription.id).forUpdate().executeTakeFirst();
  if (!existing) {
    await tx
      .insertInto('billing_subscriptions')
      .values({
        id: subscription.id,
        workspace_id: workspaceId,
        plan_id: subscription.metadata?.plan_id ?? 'free',
        price_plan_id: subscription.metadata?.plan_id ?? null,
        status,
        item_id: item,
        current_period_end: period.current_period_end ?? null,
        cancel_at_period_end: period.cancel_at_period_end,
        past_due_since: status === 'past_due' ? now : null,
        created_at: new Date((subscription.created || Math.floor(now.getTime() / 1000)) * 1000),
        updated_at: now,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    return;
  }
  const next: SubscriptionStatus = existing.status === 'canceled' ? 'canceled' : existing.status === 'past_due' && status === 'active' ? 'past_due' : status;
  await tx
    .updateTable('billing_subscriptions')
    .set({
      status: next,
      item_id: item ?? existing.item_id,
      ...(subscription.metadata?.plan_id ? { price_plan_id: subscription.metadata.plan_id } : {}),
      ...(period.current_period_end ? { current_period_end: period.current_period_end } : {}),
      cancel_at_period_end: period.cancel_at_period_end,
      past_due_since: next === 'past_due' ? (existing.past_due_since ?? now) : existing.past_due_since,
      updated_at: now,
    })
    .where('id', '=', subscription.id)
    .execute();
}

async function recordInvoice(tx: Tx, invoice: InvoiceShape, workspaceId: string, subscriptionId: string | null, planId: string | null, now: Date) {
  const line = invoice.lines?.data?.[0];
  const periodStart = line?.period?.start ?? invoice.period_start;
  const periodEnd = line?.period?.end ?? invoice.period_end;
  const values = {
    status: invoice.status ?? 'open',
    number: invoice.number ?? null,
    amount_due: invoice.amount_due ?? 0,
    amount_paid: invoice.amount_paid ?? 0,
    currency: (invoice.currency ?? 'usd').toLowerCase(),
    period_start: periodStart ? new Date(periodStart * 1000) : null,
    period_end: periodEnd ? new Date(periodEnd * 1000) : null,
    hosted_invoice_url: invoice.hosted_invoice_url ?? null,
    updated_at: now,
  };
  // A paid invoice stays paid, whichever of its events arrives last.
  return tx
    .insertInto('billing_invoices')
    .values({ id: invoice.id!, workspace_id: workspaceId, subscription_id: subscriptionId, plan_id: planId, created_at: new Date(invoice.created * 1000), ...values })
    .onConflict((oc) => oc.column('id').doUpdateSet((eb) => ({ ...values, status: eb.case().when('billing_invoices.status', '=', 'paid').then('paid').else(values.status).end() })))
    .returningAll()
    .executeTakeFirstOrThrow();
}

function planChangedAlert(change: PlanChange, reason: string): BillingAlert {
  return {
    workspaceId: change.workspaceId,
    type: 'billing.plan_changed',
    data: {
      message: `The workspace's plan changed from ${change.previousPlanId} to ${change.planId} (${reason}): ${change.monthlyQuota.toLocaleString('en-US')} credits a month from now on.`,
      plan_id: change.planId,
      previous_plan_id: change.previousPlanId,
      reason: null,
      available_credits: null,
      low_credits_threshold: null,
      scope: null,
      key_id: null,
      cap: null,
      spent: null,
    },
  };
}

export async function handleSubscriptionEvent(
  tx: Tx,
  services: Pick<Resources, 'config' | 'log'>,
  event: Stripe.Event,
  fetched: Stripe.Subscription | null,
  now: Date,
): Promise<Handled> {
  switch (event.type) {
    case 'checkout.session.completed': {
      const workspaceId = await workspaceExists(tx, fetched?.metadata?.workspace_id);
      if (!fetched || !workspaceId) return ignored;
      await upsertSubscription(tx, fetched, workspaceId, now);
      return { outcome: 'handled', paymentId: null, alerts: [] };
    }
    case 'invoice.paid':
    case 'invoice.payment_failed':
      return invoiceEvent(tx, services.config, event.type, event.data.object as InvoiceShape, fetched, now);
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted':
      return subscriptionChanged(tx, services.config, event.type, event.data.object as Stripe.Subscription, now);
    default:
      return ignored;
  }
}

async function invoiceEvent(tx: Tx, config: AppConfig, type: 'invoice.paid' | 'invoice.payment_failed', invoice: InvoiceShape, fetched: Stripe.Subscription | null, now: Date): Promise<Handled> {
  const subscriptionId = invoiceSubscriptionId(invoice);
  if (!subscriptionId || !invoice.id) return ignored;
  const metadata = { ...(fetched?.metadata ?? {}), ...invoiceMetadata(invoice) };
  const known = await tx.selectFrom('billing_subscriptions').select(['workspace_id', 'plan_id']).where('id', '=', subscriptionId).executeTakeFirst();
  const workspaceId = await workspaceExists(tx, known?.workspace_id ?? metadata.workspace_id);
  if (!workspaceId) return ignored;
  if (fetched) await upsertSubscription(tx, fetched, workspaceId, now);
  const plan = findPlan(config, metadata.plan_id);
  const row = await recordInvoice(tx, invoice, workspaceId, subscriptionId, plan?.id ?? null, now);
  const done: Handled = { outcome: 'handled', paymentId: null, alerts: [] };
  if (type === 'invoice.payment_failed') {
    const sub = await tx
      .updateTable('billing_subscriptions')
      .set((eb) => ({ status: 'past_due', past_due_since: eb.fn.coalesce('past_due_since', eb.val(now)), updated_at: now }))
      .where('id', '=', subscriptionId)
      .where('status', '!=', 'canceled')
      .returning(['plan_id', 'past_due_since'])
      .executeTakeFirst();
    const planId = sub?.plan_id ?? plan?.id ?? 'free';
    done.alerts.push({
      workspaceId,
      type: 'billing.invoice_payment_failed',
      data: {
        message: `The invoice ${row.number ?? row.id} of the ${planId} plan could not be paid. Update the card in "Manage billing" within ${config.planGraceDays} days, or the workspace falls to the free plan.`,
        plan_id: planId,
        invoice: renderInvoice(row),
        reason: null,
        available_credits: null,
        low_credits_threshold: null,
        scope: null,
        key_id: null,
        cap: null,
        spent: null,
      },
    });
    return done;
  }
  // invoice.paid
  if (!plan) return done;
  await tx.selectFrom('workspaces').select('id').where('id', '=', workspaceId).forUpdate().executeTakeFirstOrThrow();
  const workspace = (await readPlanRow(tx, workspaceId)) ?? { plan_id: 'free', plan_invoice_at: null };
  const invoiceAt = new Date(invoice.created * 1000);
  const sub = await tx.selectFrom('billing_subscriptions').select(['status']).where('id', '=', subscriptionId).executeTakeFirst();
  if (workspace.plan_invoice_at && invoiceAt < workspace.plan_invoice_at) return done; // a later invoice set the plan already
  await tx
    .updateTable('billing_subscriptions')
    .set((eb) => ({
      plan_id: plan.id,
      status: eb.case().when('status', '=', 'canceled').then('canceled' as SubscriptionStatus).else('active' as SubscriptionStatus).end(),
      past_due_since: null,
      grace_ended_at: null,
      updated_at: now,
    }))
    .where('id', '=', subscriptionId)
    .execute();
  if (sub?.status === 'canceled') {
    // A late invoice of an ended subscription is recorded; it gives no plan.
    if (workspace.plan_id === 'free') await applyPlan(tx, workspaceId, freePlan(config), now, invoiceAt, STRIPE_ACTOR);
    return done;
  }
  const change = await applyPlan(tx, workspaceId, plan, now, invoiceAt, STRIPE_ACTOR);
  if (change) done.alerts.push(planChangedAlert(change, `invoice ${row.number ?? row.id} paid`));
  return done;
}

async function subscriptionChanged(tx: Tx, config: AppConfig, type: string, subscription: Stripe.Subscription, now: Date): Promise<Handled> {
  const known = await tx.selectFrom('billing_subscriptions').select('workspace_id').where('id', '=', subscription.id).executeTakeFirst();
  const workspaceId = await workspaceExists(tx, known?.workspace_id ?? subscription.metadata?.workspace_id);
  if (!workspaceId) return ignored;
  await upsertSubscription(tx, subscription, workspaceId, now);
  const done: Handled = { outcome: 'handled', paymentId: null, alerts: [] };
  if (type !== 'customer.subscription.deleted') return done;
  await tx
    .updateTable('billing_subscriptions')
    .set({ status: 'canceled', past_due_since: null, updated_at: now })
    .where('id', '=', subscription.id)
    .execute();
  const otherLive = await tx
    .selectFrom('billing_subscriptions')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('id', '!=', subscription.id)
    .where('status', 'in', [...LIVE_STATUSES])
    .executeTakeFirst();
  if (otherLive) return done;
  // Invoices made before the end can no longer bring the plan back.
  const change = await applyPlan(tx, workspaceId, freePlan(config), now, now, STRIPE_ACTOR);
  if (change) done.alerts.push(planChangedAlert(change, 'the subscription ended'));
  return done;
}
