import { sql } from 'kysely';
import { recordWebhookDelivery } from '@sdx/metrics';
import { DELIVERY_TIMEOUT_MS, retryDelayMs, signatureHeaders } from '@sdx/webhooks';
import type { Services } from '../context';
import { enqueueDeliveries, nextDeliveryAttempt } from './deliveries';
import { signingSecrets } from './endpoints';

/** An attempt holds its delivery this long: past the send's timeout, then the sweep may hand it to another worker. */
export const DELIVERY_LEASE_MS = DELIVERY_TIMEOUT_MS + 5_000;

export type AttemptOutcome = 'succeeded' | 'retrying' | 'failed' | 'skipped';

interface Claimed {
  id: string;
  webhook_id: string;
  event_id: string;
  attempts: number;
  lease_token: string;
  url: string;
  enabled: boolean;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  type: string;
  body: string;
}

/**
 * One attempt of one delivery, as a worker runs it for each entry of the delivery queue:
 *
 * 1. claim: a pending delivery that is due and that no other attempt holds is taken under a
 *    fresh lease (attempts + 1), with what the message needs (the webhook's URL and secrets,
 *    the event's body), in one statement; anything else (succeeded, failed, not due, held) is
 *    skipped, so a duplicate or stale entry sends nothing;
 * 2. send: the body, signed now (webhook-timestamp) with the webhook's secrets (both during a
 *    rotation), to the URL, through the SSRF guard (checked again now, after DNS resolution);
 * 3. record, while the lease is ours: succeeded on a 2xx; otherwise pending again at the next
 *    time of the retry schedule (its entry queued with that delay), or failed once the schedule
 *    is spent.
 * If the process dies during 2, the lease lapses and the sweep queues the delivery again: the
 * receiver may then get the message twice, with the same webhook-id (at least once).
 */
export async function attemptDelivery(services: Services, deliveryId: string): Promise<AttemptOutcome> {
  const { rows } = await sql<Claimed>`
    with claimed as (
      update webhook_deliveries d
      set attempts = d.attempts + 1, lease_token = gen_random_uuid()::text, lease_until = now() + make_interval(secs => ${DELIVERY_LEASE_MS / 1000})
      where d.id = ${deliveryId}
        and d.status = 'pending'
        and d.next_attempt_at <= now() + interval '1 second'
        and (d.lease_until is null or d.lease_until < now())
      returning d.id, d.webhook_id, d.event_id, d.attempts, d.lease_token
    )
    select c.*, w.url, w.enabled, w.secret, w.previous_secret, w.previous_secret_expires_at, e.type, e.body
    from claimed c
    join webhooks w on w.id = c.webhook_id
    join webhook_events e on e.id = c.event_id
  `.execute(services.db);
  const claimed = rows[0];
  if (!claimed) return 'skipped';

  const now = services.clock.now();
  const outcome =
    !claimed.enabled && claimed.type !== 'webhook.test'
      ? { ok: false, status: null, error: 'the webhook is disabled' }
      : await services.webhooks.send({
          url: claimed.url,
          body: claimed.body,
          headers: signatureHeaders(signingSecrets(claimed, now), claimed.event_id, Math.floor(now.getTime() / 1000), claimed.body),
        });
  recordWebhookDelivery(outcome.ok ? 'succeeded' : 'failed');

  const delayMs = outcome.ok || !claimed.enabled ? null : retryDelayMs(services.config.webhookRetrySchedule, claimed.attempts);
  const status = outcome.ok ? 'succeeded' : delayMs === null ? 'failed' : 'pending';
  const recorded = await services.db
    .updateTable('webhook_deliveries')
    .set({
      status,
      response_status: outcome.status,
      error: outcome.error,
      next_attempt_at: delayMs === null ? null : sql<Date>`now() + make_interval(secs => ${delayMs / 1000})`,
      delivered_at: outcome.ok ? sql<Date>`now()` : null,
      lease_token: null,
      lease_until: null,
    })
    .where('id', '=', claimed.id)
    .where('lease_token', '=', claimed.lease_token)
    .returning(['id', 'webhook_id', 'attempts'])
    .executeTakeFirst();
  if (!recorded) return 'skipped';
  if (status === 'pending') {
    await enqueueDeliveries(services, [nextDeliveryAttempt(recorded, delayMs!)]);
    return 'retrying';
  }
  return status;
}
