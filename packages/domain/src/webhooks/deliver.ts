import { sql } from 'kysely';
import { type Executor, jsonRows } from '@sdx/db';
import { type FlushResult, GroupCommit } from '../group-commit';
import { recordWebhookDelivery } from '@sdx/metrics';
import { DELIVERY_TIMEOUT_MS, retryDelayMs, signatureHeaders } from '@sdx/webhooks';
import type { Resources } from '../resources';
import { enqueueDeliveries, nextDeliveryAttempt } from './deliveries';
import { signingSecrets } from './endpoints';

/** An attempt holds its delivery this long: past the send's timeout, then the sweep may hand it to another worker. */
export const DELIVERY_LEASE_MS = DELIVERY_TIMEOUT_MS + 5_000;

export type AttemptOutcome = 'succeeded' | 'retrying' | 'failed' | 'skipped';

/** A delivery taken under a lease for one attempt, with what its message needs. */
export interface ClaimedDelivery {
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

/** How an attempt ended, to record while its lease holds. */
export interface DeliveryOutcome {
  id: string;
  lease: string;
  status: 'succeeded' | 'pending' | 'failed';
  responseStatus: number | null;
  error: string | null;
  /** For `pending`: when the next attempt is due, in milliseconds from now. */
  delayMs: number | null;
}

/**
 * Claims deliveries for one attempt each (the group of the process's claim batcher): a pending
 * delivery that is due and that no other attempt holds is taken under a fresh lease (attempts +
 * 1), with the webhook's URL and secrets and the event's body; null for any other (succeeded,
 * failed, not due, held, or a second entry of one delivery in the same group). Rows are locked
 * in ID order and rows another claim holds are skipped, so claims of several workers never wait
 * on each other.
 */
export async function claimDeliveries(db: Executor, ids: readonly string[]): Promise<FlushResult<ClaimedDelivery | null>> {
  const { rows } = await sql<ClaimedDelivery>`
    with locked as materialized (
      select l.id from webhook_deliveries l where l.id = any(${[...new Set(ids)]}::text[]) order by l.id for update skip locked
    ), claimed as (
      update webhook_deliveries d
      set attempts = d.attempts + 1, lease_token = gen_random_uuid()::text, lease_until = now() + make_interval(secs => ${DELIVERY_LEASE_MS / 1000})
      from locked k
      where d.id = k.id
        and d.status = 'pending'
        and d.next_attempt_at <= now() + interval '1 second'
        and (d.lease_until is null or d.lease_until < now())
      returning d.id, d.webhook_id, d.event_id, d.attempts, d.lease_token
    )
    select c.*, w.url, w.enabled, w.secret, w.previous_secret, w.previous_secret_expires_at, e.type, e.body
    from claimed c
    join webhooks w on w.id = c.webhook_id
    join webhook_events e on e.id = c.event_id
  `.execute(db);
  const claimed = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => {
    const row = claimed.get(id) ?? null;
    claimed.delete(id);
    return row;
  });
}

/** Records outcomes (the group of the process's outcome batcher), each only while its lease holds; the row as recorded, or null. */
export async function recordDeliveryOutcomes(
  db: Executor,
  outcomes: readonly DeliveryOutcome[],
): Promise<FlushResult<RecordedDelivery | null>> {
  const values = outcomes.map((o) => ({
    id: o.id,
    lease: o.lease,
    status: o.status,
    response_status: o.responseStatus,
    error: o.error,
    delay_ms: o.delayMs,
  }));
  const { rows } = await sql<RecordedDelivery>`
    update webhook_deliveries d
    set status = v.status,
        response_status = v.response_status,
        error = v.error,
        next_attempt_at = case when v.delay_ms is null then null else now() + make_interval(secs => v.delay_ms / 1000.0) end,
        delivered_at = case when v.status = 'succeeded' then now() end,
        lease_token = null,
        lease_until = null
    from ${jsonRows(values, 'id text, lease text, status text, response_status int, error text, delay_ms int')} as v
    where d.id = v.id and d.lease_token = v.lease
    returning d.id, d.webhook_id, d.attempts
  `.execute(db);
  const recorded = new Map(rows.map((row) => [row.id, row]));
  return outcomes.map((o) => recorded.get(o.id) ?? null);
}

export interface RecordedDelivery {
  id: string;
  webhook_id: string;
  attempts: number;
}

/**
 * One attempt of one delivery, as a worker runs it for each entry of the delivery queue:
 *
 * 1. claim (services.deliveries.claim → claimDeliveries): skipped unless the delivery is
 *    pending, due and held by no other attempt, so a duplicate or stale entry sends nothing;
 * 2. send: the body, signed now (webhook-timestamp) with the webhook's secrets (both during a
 *    rotation), to the URL, through the SSRF guard (checked again now, after DNS resolution);
 * 3. record, while the lease is ours (services.deliveries.record → recordDeliveryOutcomes):
 *    succeeded on a 2xx; otherwise pending again at the next time of the retry schedule (its
 *    entry queued with that delay), or failed once the schedule is spent.
 * If the process dies during 2, the lease lapses and the sweep queues the delivery again: the
 * receiver may then get the message twice, with the same webhook-id (at least once).
 * `sent` is called once the receiver is done with (answered, timed out, or not needed): what
 * follows is the service's own bookkeeping, which the per-receiver bound need not wait for.
 */
export async function attemptDelivery(
  services: Resources & { deliveries: DeliveryAttempts },
  deliveryId: string,
  sent: () => void = () => undefined,
): Promise<AttemptOutcome> {
  const claimed = await services.deliveries.claim(deliveryId).catch((error: unknown) => {
    sent();
    throw error;
  });
  if (!claimed) {
    sent();
    return 'skipped';
  }

  const now = services.clock.now();
  const send = async () => {
    // A secret no key of this process opens (SECRETS_KEY missing or wrong) throws here: the
    // attempt is given up unrecorded, and its lease lapses into the sweep once the key is back.
    const headers = signatureHeaders(
      signingSecrets(services.config, claimed, now),
      claimed.event_id,
      Math.floor(now.getTime() / 1000),
      claimed.body,
    );
    return services.webhooks.send({ url: claimed.url, body: claimed.body, headers });
  };
  const outcome = await (
    !claimed.enabled && claimed.type !== 'webhook.test'
      ? Promise.resolve({ ok: false, status: null, error: 'the webhook is disabled' })
      : send()
  ).finally(sent);
  recordWebhookDelivery(outcome.ok ? 'succeeded' : 'failed');

  const delayMs = outcome.ok || !claimed.enabled ? null : retryDelayMs(services.config.webhookRetrySchedule, claimed.attempts);
  const status = outcome.ok ? 'succeeded' : delayMs === null ? 'failed' : 'pending';
  const recorded = await services.deliveries.record({
    id: claimed.id,
    lease: claimed.lease_token,
    status,
    responseStatus: outcome.status,
    error: outcome.error,
    delayMs,
  });
  if (!recorded) return 'skipped';
  if (status === 'pending') {
    await enqueueDeliveries(services, [nextDeliveryAttempt(recorded, delayMs!)]);
    return 'retrying';
  }
  return status;
}

/** Claims and outcomes of webhook delivery attempts; `services.deliveries` of every process. */
export interface DeliveryAttempts {
  /** The delivery under a fresh lease for this attempt; null unless it is pending, due and held by no other attempt. */
  claim(deliveryId: string): Promise<ClaimedDelivery | null>;
  /** The attempt's outcome, recorded while its lease is held; null when it no longer is. */
  record(outcome: DeliveryOutcome): Promise<RecordedDelivery | null>;
}

/**
 * Group commit of the worker's delivery attempts: claims that arrive together share one
 * statement (claimDeliveries), outcomes another (recordDeliveryOutcomes). The per-receiver lanes
 * bound them, so they wait rather than being refused.
 */
export class GroupDeliveryAttempts implements DeliveryAttempts {
  private readonly claims: GroupCommit<string, ClaimedDelivery | null>;
  private readonly outcomes: GroupCommit<DeliveryOutcome, RecordedDelivery | null>;

  constructor(db: Executor) {
    this.claims = new GroupCommit((ids) => claimDeliveries(db, ids), { maxBatch: 64, maxInFlight: 2 });
    this.outcomes = new GroupCommit((outcomes) => recordDeliveryOutcomes(db, outcomes), { maxBatch: 64, maxInFlight: 2 });
  }

  claim(deliveryId: string): Promise<ClaimedDelivery | null> {
    return this.claims.submit(deliveryId);
  }

  record(outcome: DeliveryOutcome): Promise<RecordedDelivery | null> {
    return this.outcomes.submit(outcome);
  }
}
