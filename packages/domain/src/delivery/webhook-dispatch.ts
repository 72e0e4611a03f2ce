import { sql } from 'kysely';
import { jsonRows, type Tx, type WebhookEventRow } from '@sdx/db';
import { countChildrenOf } from '../batches/queries';
import { renderBatch } from '../batches/render';
import { deriveBatchStatus } from '../batches/status';
import type { Services } from '../context';
import { newId } from '../ids';
import { renderJob } from '../jobs/render';
import { renderScheduleRun } from '../schedules/render';
import { enqueueDeliveries, nextDeliveryAttempt } from '../webhooks/deliveries';
import { ALL_EVENTS, BATCH_CHILD_ENDED, recordEvents, type EventCandidate } from '../webhooks/events';

/**
 * The dispatcher: moves events from the outbox to the delivery queue. One pass, in one
 * transaction, takes the oldest undispatched events (FOR UPDATE SKIP LOCKED, so the
 * dispatchers of several workers split them and never wait on each other), renders each
 * event's body once (the Job, Batch without `jobs`, or ScheduleRun as the API renders it, a
 * job's `result` null), makes one delivery per enabled webhook of the workspace that takes the
 * event, and marks the events dispatched. After commit, the deliveries' entries are queued
 * (without waiting for Redis: the next pass goes on meanwhile).
 *
 * A crash before commit leaves the events undispatched for the next pass; one after it leaves
 * pending deliveries without entries, which the sweep (recoverDeliveries) queues. No event is
 * lost, and none is dispatched twice.
 *
 * `batch.child_ended` rows are resolved here, from the committed state: when the child's batch
 * has ended (every child terminal), its event (batch.completed, batch.failed or
 * batch.cancelled, as the batch's status says) is written for the next pass, once per batch
 * whichever child's check sees it first; the check rows themselves go.
 */
export async function dispatchEvents(services: Services, limit = 200): Promise<number> {
  // An idle outbox costs one index probe, not a transaction.
  const waiting = await services.db
    .selectFrom('webhook_events')
    .select('id')
    .where('dispatched_at', 'is', null)
    .limit(1)
    .executeTakeFirst();
  if (!waiting) return 0;
  const { taken, deliveries } = await services.db.transaction().execute(async (tx) => {
    const events = await tx
      .selectFrom('webhook_events')
      .selectAll()
      .where('dispatched_at', 'is', null)
      .orderBy('id')
      .limit(limit)
      .forUpdate()
      .skipLocked()
      .execute();
    if (events.length === 0) return { taken: 0, deliveries: [] };
    const now = services.clock.now();
    const checks = events.filter((e) => e.type === BATCH_CHILD_ENDED);
    if (checks.length > 0) await resolveBatchChecks(tx, now, checks);
    const outgoing = events.filter((e) => e.type !== BATCH_CHILD_ENDED);
    if (outgoing.length === 0) return { taken: events.length, deliveries: [] };
    // The reads go together, then the writes (the connection pipelines them): a pass costs a
    // few round trips whatever the number of events.
    const [bodies, hooks] = await Promise.all([
      renderBodies(tx, outgoing),
      tx
        .selectFrom('webhooks')
        .select(['id', 'workspace_id', 'events'])
        .where('workspace_id', 'in', [...new Set(outgoing.map((e) => e.workspace_id))])
        .where('enabled', '=', true)
        .execute(),
    ]);
    const rows = outgoing.flatMap((event) => {
      if (!bodies.has(event.id)) return [];
      return hooks
        .filter((h) => h.workspace_id === event.workspace_id && (h.events.includes(event.type) || h.events.includes(ALL_EVENTS)))
        .filter((h) => event.webhook_id === null || event.webhook_id === h.id)
        .map((h) => ({
          id: newId('dlv'),
          webhook_id: h.id,
          event_id: event.id,
          workspace_id: event.workspace_id,
          next_attempt_at: now,
          created_at: now,
        }));
    });
    const marks = outgoing.map((event) => ({ id: event.id, body: bodies.get(event.id) ?? null }));
    const [inserted] = await Promise.all([
      rows.length > 0 ? tx.insertInto('webhook_deliveries').values(rows).returning(['id', 'webhook_id', 'attempts']).execute() : [],
      sql`
        update webhook_events e set dispatched_at = ${now}, body = v.body
        from ${jsonRows(marks, 'id text, body text')} as v
        where e.id = v.id
      `.execute(tx),
    ]);
    return { taken: events.length, deliveries: inserted };
  });
  // Not waited for: the next pass goes on while Redis takes these (a failure is the sweep's).
  void enqueueDeliveries(
    services,
    deliveries.map((d) => nextDeliveryAttempt(d)),
  );
  return taken;
}

/** Batch checks: the events of the batches that have ended are written (once each); the checks are removed. */
async function resolveBatchChecks(tx: Tx, now: Date, checks: WebhookEventRow[]): Promise<void> {
  const ids = [...new Set(checks.map((c) => c.subject_id!))];
  const batches = await tx.selectFrom('batches').selectAll().where('id', 'in', ids).execute();
  const counts = await countChildrenOf(tx, batches);
  const ended: EventCandidate[] = batches.flatMap((batch) => {
    const status = deriveBatchStatus(batch, counts.get(batch.id)!);
    return status === 'queued' || status === 'running'
      ? []
      : [{ workspaceId: batch.workspace_id, type: `batch.${status}` as const, subjectId: batch.id }];
  });
  await tx
    .deleteFrom('webhook_events')
    .where(
      'id',
      'in',
      checks.map((c) => c.id),
    )
    .execute();
  await recordEvents(tx, now, ended);
}

/** The message body of each event whose subject still exists, by event ID. */
async function renderBodies(tx: Tx, events: WebhookEventRow[]): Promise<Map<string, string>> {
  const ids = (prefix: string) => events.filter((e) => e.type.startsWith(prefix) && e.subject_id).map((e) => e.subject_id!);
  const jobIds = ids('job.');
  const batchIds = ids('batch.');
  const runIds = ids('schedule.run.');
  // Batches are counted by the IDs and workspaces the events name, so every read goes at once.
  const subjects = events.filter((e) => e.type.startsWith('batch.')).map((e) => ({ id: e.subject_id!, workspace_id: e.workspace_id }));
  const [jobs, batches, runs, counts] = await Promise.all([
    jobIds.length ? tx.selectFrom('jobs').selectAll().where('id', 'in', jobIds).execute() : [],
    batchIds.length ? tx.selectFrom('batches').selectAll().where('id', 'in', batchIds).execute() : [],
    runIds.length ? tx.selectFrom('schedule_runs').selectAll().where('id', 'in', runIds).execute() : [],
    countChildrenOf(tx, subjects),
  ]);
  const data = new Map<string, unknown>([
    ...jobs.map((job) => [job.id, renderJob(job, null)] as const),
    ...batches.map((batch) => [batch.id, renderBatch(batch, counts.get(batch.id)!, null)] as const),
    ...runs.map((run) => [run.id, renderScheduleRun(run)] as const),
  ]);
  const bodies = new Map<string, string>();
  for (const event of events) {
    if (event.body !== null) {
      bodies.set(event.id, event.body);
      continue;
    }
    const subject = event.subject_id ? data.get(event.subject_id) : undefined;
    if (subject === undefined) continue;
    bodies.set(
      event.id,
      JSON.stringify({
        id: event.id,
        type: event.type,
        created_at: event.created_at.toISOString(),
        workspace_id: event.workspace_id,
        data: subject,
      }),
    );
  }
  return bodies;
}
