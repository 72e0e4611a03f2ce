import { type RawBuilder, sql } from 'kysely';
import { jsonRows, type Tx } from '@sdx/db';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '@sdx/contract';
import { newId } from '../ids';

/**
 * The events webhooks take (extensions.md 5), and the outbox writers: every event row is written
 * by the statement, and so in the transaction, of the change it tells of, and only when the
 * workspace has an enabled webhook that takes it. That check is an index probe inside the same
 * statement (webhooks_enabled_idx), so a workspace without webhooks pays next to nothing.
 * This file is the only place that inserts webhook_events rows (the test send's included); the
 * dispatcher (delivery/webhook-dispatch.ts) only marks them dispatched and removes its batch checks.
 */
/** The event types, one list generated from openapi.yaml (WebhookEventType). */
export { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '@sdx/contract';

/** What a webhook's `events` may hold: event types, or `*` for all of them. */
export const ALL_EVENTS = '*';

/**
 * An outbox row telling the dispatcher that a batch child ended. Whether its batch ended with it
 * is decided by the dispatcher from the committed state (the last child's row is always read
 * after every child's change committed), which needs no lock on the batch in the job's
 * transaction; the dispatcher then writes the batch's event (once: webhook_events_subject_key).
 */
export const BATCH_CHILD_ENDED = 'batch.child_ended';

const BATCH_EVENTS: readonly string[] = WEBHOOK_EVENT_TYPES.filter((type) => type.startsWith('batch.'));

/** An event to write, if a webhook of its workspace takes it. */
export interface EventCandidate {
  workspaceId: string;
  type: WebhookEventType | typeof BATCH_CHILD_ENDED;
  subjectId: string;
}

/** True when an enabled webhook of `workspace` takes events of `type` (an SQL condition). */
export function takenByAWebhook(workspace: RawBuilder<unknown>, type: RawBuilder<unknown>): RawBuilder<boolean> {
  return sql<boolean>`exists (
    select 1 from webhooks w
    where w.workspace_id = ${workspace} and w.enabled
      and w.events && (case when ${type} = ${BATCH_CHILD_ENDED} then ${[...BATCH_EVENTS, ALL_EVENTS]}::text[] else array[${type}, ${ALL_EVENTS}]::text[] end)
  )`;
}

/**
 * The insert of the events of `relation` (columns id, workspace_id, type, subject_id) that a
 * webhook takes, returning their IDs; an event already written for its subject is not written
 * again. A statement of its own, or a CTE of a larger one (the completion's).
 */
export function insertEvents(relation: RawBuilder<unknown>, now: Date): RawBuilder<{ id: string }> {
  return sql<{ id: string }>`
    insert into webhook_events (id, workspace_id, type, subject_id, created_at)
    select e.id, e.workspace_id, e.type, e.subject_id, ${now}::timestamptz
    from ${relation} as e
    where ${takenByAWebhook(sql`e.workspace_id`, sql`e.type`)}
    on conflict do nothing
    returning id
  `;
}

/** Writes the candidates a webhook takes, in one statement; how many were written. */
export async function recordEvents(tx: Tx, now: Date, candidates: readonly EventCandidate[]): Promise<number> {
  if (candidates.length === 0) return 0;
  const rows = candidates.map((c) => ({ id: newId('evt'), workspace_id: c.workspaceId, type: c.type, subject_id: c.subjectId }));
  const { rows: written } = await insertEvents(jsonRows(rows, 'id text, workspace_id text, type text, subject_id text'), now).execute(tx);
  return written.length;
}

/**
 * The `webhook.test` event of a test send (POST /v1/webhooks/{id}/test): for that one webhook
 * (webhook_id set) whether or not it takes the type, enabled or not, with its body rendered now
 * and already dispatched, since its caller writes the delivery itself in the same transaction.
 * Returns the event's ID.
 */
export async function recordTestEvent(tx: Tx, workspaceId: string, webhookId: string, now: Date): Promise<string> {
  const id = newId('evt');
  const body = JSON.stringify({
    id,
    type: 'webhook.test',
    created_at: now.toISOString(),
    workspace_id: workspaceId,
    data: { webhook_id: webhookId, message: 'A test event, sent on request. Verify its signature as you would any other.' },
  });
  await tx
    .insertInto('webhook_events')
    .values({
      id,
      workspace_id: workspaceId,
      type: 'webhook.test',
      subject_id: null,
      webhook_id: webhookId,
      body,
      created_at: now,
      dispatched_at: now,
    })
    .execute();
  return id;
}

/** The events of jobs that ended: their own, and a check of the batch of each batch child. */
export function endingCandidates(
  jobs: ReadonlyArray<{ id: string; workspace_id: string; batch_id: string | null; status: string }>,
): EventCandidate[] {
  return jobs.flatMap((job): EventCandidate[] => [
    { workspaceId: job.workspace_id, type: `job.${job.status}` as WebhookEventType, subjectId: job.id },
    ...(job.batch_id ? [{ workspaceId: job.workspace_id, type: BATCH_CHILD_ENDED, subjectId: job.batch_id } as const] : []),
  ]);
}

/** The events of schedule runs: dispatched (queued with its work) or skipped; a failed dispatch tells none. */
export function runCandidates(
  runs: ReadonlyArray<{ id: string; workspace_id: string; status: string; job_id: string | null; batch_id: string | null }>,
): EventCandidate[] {
  return runs.flatMap((run): EventCandidate[] => {
    if (run.status === 'queued' && (run.job_id || run.batch_id))
      return [{ workspaceId: run.workspace_id, type: 'schedule.run.dispatched', subjectId: run.id }];
    if (run.status === 'skipped_credits' || run.status === 'skipped_overlap')
      return [{ workspaceId: run.workspace_id, type: 'schedule.run.skipped', subjectId: run.id }];
    return [];
  });
}

/** An event whose body is rendered when it is written (the billing events: their subject is a moment, not a row to read later). */
export interface RenderedEventCandidate {
  workspaceId: string;
  type: WebhookEventType;
  /** Unique per type: a second event of the same type and subject is not written. */
  subjectId: string;
  /** The body's `data`. */
  data: unknown;
}

/**
 * Writes the candidates a webhook takes with their bodies rendered now (`{id, type, created_at,
 * workspace_id, data}`), in one statement; how many were written. An event already written for
 * its type and subject is not written again.
 */
export async function recordRenderedEvents(tx: Tx, now: Date, candidates: readonly RenderedEventCandidate[]): Promise<number> {
  if (candidates.length === 0) return 0;
  const rows = candidates.map((c) => {
    const id = newId('evt');
    const body = JSON.stringify({ id, type: c.type, created_at: now.toISOString(), workspace_id: c.workspaceId, data: c.data });
    return { id, workspace_id: c.workspaceId, type: c.type, subject_id: c.subjectId, body };
  });
  const { rows: written } = await sql<{ id: string }>`
    insert into webhook_events (id, workspace_id, type, subject_id, body, created_at)
    select e.id, e.workspace_id, e.type, e.subject_id, e.body, ${now}::timestamptz
    from ${jsonRows(rows, 'id text, workspace_id text, type text, subject_id text, body text')} as e
    where ${takenByAWebhook(sql`e.workspace_id`, sql`e.type`)}
    on conflict do nothing
    returning id
  `.execute(tx);
  return written.length;
}
