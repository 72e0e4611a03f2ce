import { type AppConfig, sendsMail } from '@sdx/config';
import type { components } from '@sdx/contract';
import type { BillingPaymentRow, Tx } from '@sdx/db';
import { billingMail } from '@sdx/mail';
import { newId } from '../ids';
import { queueMail } from '../mail/outbox';
import { recordRenderedEvents } from '../webhooks/events';
import { renderPayment } from './payments';

/**
 * The billing events (extensions-2.md 1): a webhook event where a webhook of the workspace takes
 * the type, and a mail to each owner and admin with a verified email when mail is configured.
 * Both are written in the caller's transaction, so they exist exactly when the change they tell
 * of committed. Called by billing (payments, refunds, failed recharges) and by admission (low
 * credits, spend caps).
 */
export type BillingEventType =
  | 'billing.payment_succeeded'
  | 'billing.payment_refunded'
  | 'billing.credits_low'
  | 'billing.spend_cap_reached'
  | 'billing.auto_recharge_failed'
  | 'billing.plan_changed'
  | 'billing.invoice_payment_failed';

export type BillingEventData = components['schemas']['BillingEventData'];

export interface BillingAlert {
  workspaceId: string;
  type: BillingEventType;
  data: BillingEventData;
}

/**
 * The subject an event is unique for (webhook_events_subject_key): a payment succeeds once and
 * its auto-recharge fails once; refunds, low credits and caps may be told again, each time a
 * new event (their callers decide when: a crossing, once per scope and month).
 */
function subjectOf(alert: BillingAlert): string {
  // A won dispute's grant-back is told as a second payment_succeeded of the payment: its own subject.
  const once =
    (alert.type === 'billing.payment_succeeded' && alert.data.reason !== 'dispute_won') || alert.type === 'billing.auto_recharge_failed';
  return once && alert.data.payment ? alert.data.payment.id : newId('evt');
}

export async function recordBillingAlerts(tx: Tx, config: AppConfig, now: Date, alerts: readonly BillingAlert[]): Promise<void> {
  if (alerts.length === 0) return;
  await recordRenderedEvents(
    tx,
    now,
    alerts.map((a) => ({ workspaceId: a.workspaceId, type: a.type, subjectId: subjectOf(a), data: a.data })),
  );
  if (!sendsMail(config)) return;
  const workspaceIds = [...new Set(alerts.map((a) => a.workspaceId))];
  const recipients = await tx
    .selectFrom('memberships as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
    .select(['m.workspace_id', 'u.email', 'w.name'])
    .where('m.workspace_id', 'in', workspaceIds)
    .where('m.role', 'in', ['owner', 'admin'])
    .where('u.email_verified_at', 'is not', null)
    .orderBy('u.email')
    .execute();
  for (const alert of alerts) {
    for (const person of recipients.filter((r) => r.workspace_id === alert.workspaceId)) {
      const mail = billingMail({ appUrl: config.appUrl, type: alert.type, workspaceName: person.name, message: alert.data.message });
      await queueMail(tx, config, { to: person.email, template: alert.type.replace('.', '_'), ...mail });
    }
  }
}

/** A price in the currency's minor unit, as people read it (`$10.00`, `¥1,000`). */
export function formatAmount(amount: number, currency: string): string {
  try {
    const format = new Intl.NumberFormat('en-US', { style: 'currency', currency: currency.toUpperCase() });
    const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
    return format.format(amount / 10 ** digits);
  } catch {
    return `${amount} ${currency.toUpperCase()} (minor units)`;
  }
}

/** Why a payment event happened (`reason` of BillingEventData). */
export type BillingEventReason = NonNullable<BillingEventData['reason']>;

/** The event of a payment (succeeded, refunded, auto-recharge failed): the payment as it is now, and why when it says. */
export function paymentAlert(
  type: BillingEventType,
  payment: BillingPaymentRow,
  availableCredits: number | null,
  message: string,
  reason?: BillingEventReason,
): BillingAlert {
  return {
    workspaceId: payment.workspace_id,
    type,
    data: {
      message,
      payment: renderPayment(payment),
      available_credits: availableCredits,
      low_credits_threshold: null,
      scope: null,
      key_id: null,
      cap: null,
      spent: null,
      reason: reason ?? null,
    },
  };
}
