import type { AppConfig } from '@sdx/config';
import type { SubscriptionStatus, Tx } from '@sdx/db';
import { systemActor } from '../audit/audit';
import type { Resources } from '../resources';
import type { BillingAlert } from './alerts';
import { applyPlan, findPlan, freePlan, type PlanChange, readPlanRow } from './plans';
import {
  type PaymentEvent,
  type PaymentGateway,
  paymentFailureOf,
  type ProviderInvoice,
  type ProviderSubscription,
} from '../payment-gateway';
import { LIVE_STATUSES, mirroredPeriod, renderInvoice } from './subscriptions';
import { ApiError } from '../errors';

/**
 * Stripe's subscription events (extensions-3.md 2), handled inside the one transaction of
 * stripe-events.ts that claims the event ID first, so each is handled once:
 * - `checkout.session.completed` (mode subscription): the subscription recorded, as read with
 *   GET /v1/subscriptions/{id} before the transaction;
 * - `invoice.paid`: the invoice recorded; the workspace's plan becomes the plan of the
 *   subscription's metadata as the invoice carries it (else as the subscription read from
 *   Stripe has it), unless a later invoice set the plan already (the quota follows the last paid
 *   invoice, whatever order the events arrive in); the subscription is active again;
 * - `invoice.payment_failed`: the invoice recorded, the subscription past due since then (the
 *   grace period of grace.ts), `billing.invoice_payment_failed` and a mail;
 * - `customer.subscription.updated`: status, period end and cancellation mirrored (a past-due
 *   subscription becomes active only by a paid invoice; a cancelled one stays cancelled);
 * - `customer.subscription.deleted`: cancelled, and the workspace falls to free unless another
 *   of its subscriptions is live.
 */
export const SUBSCRIPTION_EVENT_TYPES = [
  'invoice.paid',
  'invoice.payment_failed',
  'customer.subscription.updated',
  'customer.subscription.deleted',
] as const;

/** The actor of changes Stripe's events make. */
export const STRIPE_ACTOR = systemActor('stripe');

interface Handled {
  outcome: 'handled' | 'ignored';
  paymentId: null;
  alerts: BillingAlert[];
}

const ignored: Handled = { outcome: 'ignored', paymentId: null, alerts: [] };

export function isSubscriptionEvent(event: PaymentEvent): boolean {
  if ((SUBSCRIPTION_EVENT_TYPES as readonly string[]).includes(event.type)) return true;
  return event.type === 'checkout.session.completed' && event.kind === 'checkout' && event.checkout.mode === 'subscription';
}

/**
 * The subscription an event needs read from Stripe before its transaction opens: a subscription
 * checkout's, and an invoice's. A failure answers 503, so Stripe sends the event again.
 */
export async function prefetchSubscription(
  services: Pick<Resources, 'log'>,
  payments: PaymentGateway,
  event: PaymentEvent,
): Promise<ProviderSubscription | null> {
  if (!isSubscriptionEvent(event)) return null;
  let id: string | null = null;
  if (event.kind === 'checkout') id = event.checkout.subscriptionId;
  else if (event.kind === 'invoice') id = event.invoice.subscriptionId;
  if (!id) return null;
  try {
    return await payments.subscription(id);
  } catch (error) {
    services.log.warn(
      { stripe_event: event.id, subscription: id, stripe: paymentFailureOf(error) },
      'subscription of an event not read; Stripe will retry',
    );
    throw new ApiError(
      'billing_unavailable',
      'The subscription could not be read from Stripe now; nothing was written. Stripe retries the event.',
    );
  }
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
async function upsertSubscription(tx: Tx, subscription: ProviderSubscription, workspaceId: string, now: Date): Promise<void> {
  const status = subscription.status;
  const period = mirroredPeriod(subscription);
  const item = subscription.itemId;
  const existing = await tx
    .selectFrom('billing_subscriptions')
    .select(['status', 'past_due_since', 'item_id'])
    .where('id', '=', subscription.id)
    .forUpdate()
    .executeTakeFirst();
  if (!existing) {
    await tx
      .insertInto('billing_subscriptions')
      .values({
        id: subscription.id,
        workspace_id: workspaceId,
        plan_id: subscription.metadata.plan_id ?? 'free',
        price_plan_id: subscription.metadata.plan_id ?? null,
        status,
        item_id: item,
        current_period_end: period.current_period_end ?? null,
        cancel_at_period_end: period.cancel_at_period_end,
        past_due_since: status === 'past_due' ? now : null,
        created_at: subscription.createdAt ?? now,
        updated_at: now,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    return;
  }
  const next: SubscriptionStatus =
    existing.status === 'canceled' ? 'canceled' : existing.status === 'past_due' && status === 'active' ? 'past_due' : status;
  await tx
    .updateTable('billing_subscriptions')
    .set({
      status: next,
      item_id: item ?? existing.item_id,
      ...(subscription.metadata.plan_id ? { price_plan_id: subscription.metadata.plan_id } : {}),
      ...(period.current_period_end ? { current_period_end: period.current_period_end } : {}),
      cancel_at_period_end: period.cancel_at_period_end,
      past_due_since: next === 'past_due' ? (existing.past_due_since ?? now) : existing.past_due_since,
      updated_at: now,
    })
    .where('id', '=', subscription.id)
    .execute();
}

async function recordInvoice(
  tx: Tx,
  invoice: ProviderInvoice & { id: string },
  workspaceId: string,
  subscriptionId: string | null,
  planId: string | null,
  now: Date,
) {
  const values = {
    status: invoice.status,
    number: invoice.number,
    amount_due: invoice.amountDue,
    amount_paid: invoice.amountPaid,
    currency: invoice.currency,
    period_start: invoice.periodStart,
    period_end: invoice.periodEnd,
    hosted_invoice_url: invoice.hostedUrl,
    updated_at: now,
  };
  // A paid invoice stays paid, whichever of its events arrives last.
  return tx
    .insertInto('billing_invoices')
    .values({
      id: invoice.id,
      workspace_id: workspaceId,
      subscription_id: subscriptionId,
      plan_id: planId,
      created_at: invoice.createdAt,
      ...values,
    })
    .onConflict((oc) =>
      oc.column('id').doUpdateSet((eb) => ({
        ...values,
        status: eb.case().when('billing_invoices.status', '=', 'paid').then('paid').else(values.status).end(),
      })),
    )
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
  event: PaymentEvent,
  fetched: ProviderSubscription | null,
  now: Date,
): Promise<Handled> {
  switch (event.kind) {
    case 'checkout': {
      const workspaceId = await workspaceExists(tx, fetched?.metadata.workspace_id);
      if (!fetched || !workspaceId) return ignored;
      await upsertSubscription(tx, fetched, workspaceId, now);
      return { outcome: 'handled', paymentId: null, alerts: [] };
    }
    case 'invoice':
      if (event.type !== 'invoice.paid' && event.type !== 'invoice.payment_failed') return ignored;
      return invoiceEvent(tx, services.config, event.type, event.invoice, fetched, now);
    case 'subscription':
      if (event.type !== 'customer.subscription.updated' && event.type !== 'customer.subscription.deleted') return ignored;
      return subscriptionChanged(tx, services.config, event.type, event.subscription, now);
    default:
      return ignored;
  }
}

async function invoiceEvent(
  tx: Tx,
  config: AppConfig,
  type: 'invoice.paid' | 'invoice.payment_failed',
  invoice: ProviderInvoice,
  fetched: ProviderSubscription | null,
  now: Date,
): Promise<Handled> {
  const subscriptionId = invoice.subscriptionId;
  const invoiceId = invoice.id;
  if (!subscriptionId || !invoiceId) return ignored;
  const metadata = { ...(fetched?.metadata ?? {}), ...invoice.subscriptionMetadata };
  const known = await tx
    .selectFrom('billing_subscriptions')
    .select(['workspace_id', 'plan_id'])
    .where('id', '=', subscriptionId)
    .executeTakeFirst();
  const workspaceId = await workspaceExists(tx, known?.workspace_id ?? metadata.workspace_id);
  if (!workspaceId) return ignored;
  if (fetched) await upsertSubscription(tx, fetched, workspaceId, now);
  const plan = findPlan(config, metadata.plan_id);
  const row = await recordInvoice(tx, { ...invoice, id: invoiceId }, workspaceId, subscriptionId, plan?.id ?? null, now);
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
  const invoiceAt = invoice.createdAt;
  const sub = await tx.selectFrom('billing_subscriptions').select(['status']).where('id', '=', subscriptionId).executeTakeFirst();
  if (workspace.plan_invoice_at && invoiceAt < workspace.plan_invoice_at) return done; // a later invoice set the plan already
  await tx
    .updateTable('billing_subscriptions')
    .set((eb) => ({
      plan_id: plan.id,
      status: eb
        .case()
        .when('status', '=', 'canceled')
        .then('canceled' as SubscriptionStatus)
        .else('active' as SubscriptionStatus)
        .end(),
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

async function subscriptionChanged(
  tx: Tx,
  config: AppConfig,
  type: string,
  subscription: ProviderSubscription,
  now: Date,
): Promise<Handled> {
  const known = await tx.selectFrom('billing_subscriptions').select('workspace_id').where('id', '=', subscription.id).executeTakeFirst();
  const workspaceId = await workspaceExists(tx, known?.workspace_id ?? subscription.metadata.workspace_id);
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
