// Generated from openapi.yaml by `npm run generate:types` (src/generate-events.ts). Do not edit.
import type { components } from './openapi';

/** components.schemas.WebhookEventType: the events a webhook can take (`*` in a webhook's `events` stands for all of them). */
export const WEBHOOK_EVENT_TYPES = [
  'job.completed',
  'job.failed',
  'job.cancelled',
  'job.delivered',
  'job.delivery_failed',
  'batch.completed',
  'batch.failed',
  'batch.cancelled',
  'batch.delivered',
  'batch.delivery_failed',
  'schedule.run.dispatched',
  'schedule.run.skipped',
  'webhook.test',
  'billing.payment_succeeded',
  'billing.payment_refunded',
  'billing.credits_low',
  'billing.spend_cap_reached',
  'billing.auto_recharge_failed',
  'billing.plan_changed',
  'billing.invoice_payment_failed',
  'monitor.alert',
  'monitor.run.completed',
] as const satisfies ReadonlyArray<components['schemas']['WebhookEventType']>;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
