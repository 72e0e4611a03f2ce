import { sql } from 'kysely';
import type { Executor, Tx, WebhookDeliveryRow } from '@sdx/db';
import type { DeliveryRequest } from '@sdx/queue';
import type { Resources, Tenant } from '../resources';
import { ApiError } from '../errors';
import { newId } from '../ids';
import { getWebhookOrThrow } from './endpoints';
import { recordTestEvent } from './events';

/**
 * The delivery log of a webhook and the deliveries an admin asks for (a test send, a
 * redelivery). A delivery is one event to one webhook; its attempts follow the retry schedule
 * (deliver.ts). Its queue entries only wake a worker: Postgres holds the delivery, and the
 * sweep (recoverDeliveries) adds again the entry of a pending delivery whose entry was lost.
 */

export interface DeliveryView extends WebhookDeliveryRow {
  event_type: string;
}

/** A delivery as the API shows it. */
export function renderDelivery(row: DeliveryView) {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempts: row.attempts,
    response_status: row.response_status,
    error: row.error,
    next_attempt_at: row.next_attempt_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    delivered_at: row.delivered_at?.toISOString() ?? null,
  };
}

export interface DeliveryPage {
  limit: number;
  startingAfter?: string | null;
}

/** GET /v1/webhooks/{id}/deliveries: newest first; `startingAfter` (a delivery ID) continues with older ones. */
export async function listDeliveries(db: Executor, tenant: Tenant, webhookId: string, page: DeliveryPage): Promise<DeliveryView[]> {
  await getWebhookOrThrow(db, tenant, webhookId);
  let query = db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .selectAll('d')
    .select('e.type as event_type')
    .where('d.webhook_id', '=', webhookId)
    .where('d.workspace_id', '=', tenant.workspace.id);
  if (page.startingAfter) query = query.where('d.id', '<', page.startingAfter);
  return query.orderBy('d.id', 'desc').limit(page.limit).execute();
}

/** A new delivery of an event to a webhook, due now. */
async function insertDelivery(tx: Tx, workspaceId: string, webhookId: string, eventId: string, now: Date): Promise<WebhookDeliveryRow> {
  return tx
    .insertInto('webhook_deliveries')
    .values({
      id: newId('dlv'),
      webhook_id: webhookId,
      event_id: eventId,
      workspace_id: workspaceId,
      next_attempt_at: now,
      created_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The queue entry of a delivery's next attempt. */
export function nextDeliveryAttempt(row: Pick<WebhookDeliveryRow, 'id' | 'webhook_id' | 'attempts'>, delayMs?: number): DeliveryRequest {
  return { deliveryId: row.id, webhookId: row.webhook_id, attempt: row.attempts + 1, delayMs };
}

/** Adds delivery entries after commit; when Redis does not take them, the sweep will. Never throws. */
export async function enqueueDeliveries(services: Resources, requests: readonly DeliveryRequest[]): Promise<void> {
  if (requests.length === 0) return;
  try {
    await services.queues.enqueueDeliveries(requests);
  } catch (error) {
    services.log.warn({ err: error, deliveries: requests.length }, 'could not queue webhook deliveries; the sweep will');
  }
}

/**
 * POST /v1/webhooks/{id}/test: a `webhook.test` event for this webhook alone (whether or not it
 * takes that type, enabled or not), delivered like any other. Answers the delivery.
 */
export async function sendTestEvent(services: Resources, tenant: Tenant, webhookId: string): Promise<DeliveryView> {
  const now = services.clock.now();
  const delivery = await services.db.transaction().execute(async (tx) => {
    // Locked, so a delete of the webhook waits for the delivery (or the delivery finds it gone: 404).
    const webhook = await getWebhookOrThrow(tx, tenant, webhookId, true);
    const id = await recordTestEvent(tx, tenant.workspace.id, webhook.id, now);
    return insertDelivery(tx, tenant.workspace.id, webhook.id, id, now);
  });
  await enqueueDeliveries(services, [nextDeliveryAttempt(delivery)]);
  return { ...delivery, event_type: 'webhook.test' };
}

/**
 * POST /v1/webhooks/{id}/deliveries/{delivery_id}/redeliver: the same event (same body, same
 * webhook-id) as a new delivery with attempts of its own. Answers the new delivery.
 */
export async function redeliver(services: Resources, tenant: Tenant, webhookId: string, deliveryId: string): Promise<DeliveryView> {
  const now = services.clock.now();
  const { delivery, type } = await services.db.transaction().execute(async (tx) => {
    const webhook = await getWebhookOrThrow(tx, tenant, webhookId, true);
    const original = await tx
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
      .select(['d.event_id', 'e.type'])
      .where('d.id', '=', deliveryId)
      .where('d.webhook_id', '=', webhook.id)
      .where('d.workspace_id', '=', tenant.workspace.id)
      .executeTakeFirst();
    if (!original)
      throw new ApiError('delivery_not_found', `No delivery ${deliveryId} of webhook ${webhookId}.`, { delivery_id: deliveryId });
    return { delivery: await insertDelivery(tx, tenant.workspace.id, webhook.id, original.event_id, now), type: original.type };
  });
  await enqueueDeliveries(services, [nextDeliveryAttempt(delivery)]);
  return { ...delivery, event_type: type };
}

/** A pending delivery whose attempt is this overdue, and held by no attempt, has lost its queue entry. */
export const SWEEP_GRACE_MS = 5_000;

/**
 * The sweep: adds again the entries of pending deliveries that are overdue and that no attempt
 * holds (a process died between writing a delivery and queueing it, an attempt's process died,
 * or Redis lost the entry). An entry still waiting under the same ID is not added twice. Returns
 * how many were added.
 */
export async function recoverDeliveries(services: Resources, limit = 500): Promise<number> {
  const overdue = await services.db
    .selectFrom('webhook_deliveries')
    .select(['id', 'webhook_id', 'attempts'])
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<', sql<Date>`now() - make_interval(secs => ${SWEEP_GRACE_MS / 1000})`)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', sql<Date>`now()`)]))
    .orderBy('next_attempt_at')
    .limit(limit)
    .execute();
  if (overdue.length === 0) return 0;
  await services.queues.enqueueDeliveries(overdue.map((row) => nextDeliveryAttempt(row)));
  return overdue.length;
}
