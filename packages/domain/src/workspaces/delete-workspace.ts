import { type RawBuilder, sql } from 'kysely';
import type { Db } from '@sdx/db';
import type { RedisClient } from '@sdx/queue';
import type { Resources } from '../resources';
import type { Actor } from '../audit/audit';
import { newId } from '../ids';
import { deleteJobResults } from '../jobs/result-pages';

/** Rows one statement deletes at most: no lock outlives one batch. */
export const DELETE_BATCH = 1000;

/**
 * The tables that hold rows of a workspace, in the order they are emptied (children before the
 * rows they reference), each with how its rows are found: by its own workspace_id, or through
 * its parent's (a job's result pages and attempt sources go with each batch of its jobs).
 * `workspaces` itself goes last, in the transaction that records the deletion. A table of the
 * list that the database does not have is passed over. A test compares this list with every
 * table of the schema that has a workspace_id column, and with the tables that reference those.
 */
export const WORKSPACE_TABLES = [
  'memberships',
  'invitations',
  'idempotency_keys',
  'schedule_runs',
  'delivered_items',
  'delivery_sets',
  'schedules',
  'monitor_points',
  'monitor_series',
  'monitor_changes',
  'monitor_fields',
  'monitor_items',
  'monitor_runs',
  'monitors',
  'webhook_deliveries',
  'webhook_events',
  'webhooks',
  'job_result_pages',
  'job_attempt_sources',
  'jobs',
  'batches',
  'credit_reservations',
  'credit_ledger',
  'credit_balances',
  'api_key_spend',
  'oauth_codes',
  'oauth_tokens',
  'stripe_events',
  'stripe_held_events',
  'billing_payments',
  'billing_invoices',
  'billing_subscriptions',
  'workspace_plans',
  'billing_customers',
  'destinations',
  'api_keys',
  'audit_events',
] as const;

export type WorkspaceTable = (typeof WORKSPACE_TABLES)[number] | 'workspaces';

/** The tables deleted with each batch of jobs, by job_id (besides the result pages). */
const WITH_JOBS = ['job_attempt_sources'] as const;
type RowTable = Exclude<WorkspaceTable, 'jobs' | 'job_result_pages' | 'workspaces' | (typeof WITH_JOBS)[number]>;

export interface WorkspaceDeletion {
  /** The ID of the deletion's record (workspace_deletions), which survives it. */
  id: string;
  workspaceId: string;
  /** Rows deleted, by table. */
  rows: Partial<Record<WorkspaceTable, number>>;
  /** Queue entries of its jobs and webhook deliveries removed from Redis. */
  queueEntries: number;
  /** Other Redis keys of the workspace removed (rate limits, webhook send limits). */
  redisKeys: number;
}

export type DeleteWorkspaceOutcome = { deleted: WorkspaceDeletion } | { refused: 'not_found' | 'personal' };

/** A table's rows of the workspace: by its own workspace_id, or, without one, through its parent's. */
function rowsOf(table: RowTable, workspaceId: string): RawBuilder<unknown> {
  switch (table) {
    case 'delivered_items':
      return sql`set_id in (select d.id from delivery_sets d join schedules s on s.id = d.schedule_id where s.workspace_id = ${workspaceId})`;
    case 'delivery_sets':
      return sql`schedule_id in (select id from schedules where workspace_id = ${workspaceId})`;
    case 'oauth_tokens':
      return sql`key_id in (select id from api_keys where workspace_id = ${workspaceId})`;
    case 'stripe_events':
      return sql`payment_id in (select id from billing_payments where workspace_id = ${workspaceId})`;
    case 'stripe_held_events':
      // Refunds and disputes kept for a grant: by the PaymentIntents of the workspace's payments.
      return sql`payment_intent_id in (select payment_intent_id from billing_payments where workspace_id = ${workspaceId} and payment_intent_id is not null)`;
    default:
      return sql`workspace_id = ${workspaceId}`;
  }
}

/**
 * Deletes everything the service holds of a workspace, everywhere, for the admin CLI's
 * delete-workspace (a customer's erasure request):
 * - first its doors are shut: its keys revoked and its memberships and invitations deleted, so
 *   no request of it is admitted while the rest goes;
 * - Postgres: every table's rows of it (WORKSPACE_TABLES), each in batches of DELETE_BATCH rows
 *   committed one at a time; its jobs a batch at a time with their result pages, deleted through
 *   `deleteJobResults` (wherever the result store keeps them) and their queue entries;
 * - Redis: its jobs' and webhook deliveries' queue entries that still wait, and every key named
 *   after it (its rate-limit counters, its webhooks' send limits);
 * - last, in one transaction, the workspace row, and the record of the deletion
 *   (workspace_deletions: the workspace ID, the actor, the rows deleted by table), which no
 *   foreign key ties to the workspace, so it survives it, and which is append-only.
 * Its audit events are deleted too: the audit log refuses deletes except in a transaction that
 * names the workspace being deleted (`sdx.deleting_workspace`, migration 0027).
 *
 * A personal workspace is refused: it belongs to its user's account, which this does not delete.
 * Interrupted, it can be run again: it starts from what is left, and the record is written once
 * the workspace row goes. Users stay (they may belong to other workspaces); one whose default
 * workspace this was loses the default (the foreign key sets it null).
 */
export async function deleteWorkspace(
  services: Resources,
  redis: RedisClient,
  workspaceId: string,
  actor: Actor,
  batchSize = DELETE_BATCH,
): Promise<DeleteWorkspaceOutcome> {
  const { db } = services;
  const workspace = await db.selectFrom('workspaces').select(['id', 'kind']).where('id', '=', workspaceId).executeTakeFirst();
  if (!workspace) return { refused: 'not_found' };
  if (workspace.kind === 'personal') return { refused: 'personal' };
  const rows: Partial<Record<WorkspaceTable, number>> = {};
  const count = (table: WorkspaceTable, n: number) => (rows[table] = (rows[table] ?? 0) + n);

  await db
    .updateTable('api_keys')
    .set({ revoked_at: new Date() })
    .where('workspace_id', '=', workspaceId)
    .where('revoked_at', 'is', null)
    .execute();
  const webhookIds = (await db.selectFrom('webhooks').select('id').where('workspace_id', '=', workspaceId).execute()).map((w) => w.id);
  let queueEntries = await removeDeliveryEntries(services, webhookIds);

  const present = new Set(
    (
      await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(
        db,
      )
    ).rows.map((r) => r.name),
  );
  const withJobs = WITH_JOBS.filter((t) => present.has(t));
  for (const table of WORKSPACE_TABLES) {
    if (!present.has(table) || table === 'job_result_pages' || (WITH_JOBS as readonly string[]).includes(table)) continue;
    if (table === 'jobs') {
      const jobs = await deleteJobs(services, workspaceId, withJobs, batchSize);
      for (const [t, n] of Object.entries(jobs.rows)) count(t as WorkspaceTable, n);
      queueEntries += jobs.entries;
      continue;
    }
    count(table, await deleteInBatches(db, table as RowTable, workspaceId, batchSize));
  }
  const redisKeys = await removeRedisKeys(redis, services.config.redisPrefix, workspaceId);

  const id = newId('aud');
  await db.transaction().execute(async (tx) => {
    const gone = await tx.deleteFrom('workspaces').where('id', '=', workspaceId).executeTakeFirst();
    count('workspaces', Number(gone.numDeletedRows));
    await tx
      .insertInto('workspace_deletions')
      .values({
        id,
        workspace_id: workspaceId,
        actor_type: actor.type,
        actor_id: actor.id,
        data: JSON.stringify({ rows, queue_entries: queueEntries, redis_keys: redisKeys }),
      })
      .execute();
  });
  return { deleted: { id, workspaceId, rows, queueEntries, redisKeys } };
}

/** Deletes a table's rows of the workspace, DELETE_BATCH at a time, each batch committed on its own. */
async function deleteInBatches(db: Db, table: RowTable, workspaceId: string, batchSize: number): Promise<number> {
  const picked = sql`select ctid from ${sql.table(table)} where ${rowsOf(table, workspaceId)} limit ${batchSize}`;
  let total = 0;
  for (;;) {
    const deleted = await db.transaction().execute(async (tx) => {
      // The audit log takes deletes of this workspace's events in this transaction only.
      if (table === 'audit_events') await sql`select set_config('sdx.deleting_workspace', ${workspaceId}, true)`.execute(tx);
      const result = await sql`delete from ${sql.table(table)} where ctid = any(array(${picked}))`.execute(tx);
      return Number(result.numAffectedRows ?? 0);
    });
    total += deleted;
    if (deleted < batchSize) return total;
  }
}

/**
 * Deletes the workspace's jobs a batch at a time: each batch's queue entries, its result pages
 * (through the result store), the rows that hang off them, then the jobs.
 */
async function deleteJobs(
  services: Resources,
  workspaceId: string,
  withJobs: ReadonlyArray<(typeof WITH_JOBS)[number]>,
  batchSize: number,
): Promise<{ rows: Partial<Record<WorkspaceTable, number>>; entries: number }> {
  const { db } = services;
  const rows: Partial<Record<WorkspaceTable, number>> = { jobs: 0, job_result_pages: 0 };
  const add = (table: WorkspaceTable, n: number) => (rows[table] = (rows[table] ?? 0) + n);
  let entries = 0;
  for (;;) {
    const batch = await db
      .selectFrom('jobs')
      .select(['id', 'attempts', 'queue_entry'])
      .where('workspace_id', '=', workspaceId)
      .orderBy('id')
      .limit(batchSize)
      .execute();
    if (batch.length === 0) return { rows, entries };
    entries += await removeJobEntries(services, workspaceId, batch);
    const ids = batch.map((j) => j.id);
    add('job_result_pages', await deleteJobResults(services, ids));
    for (const table of withJobs) {
      const result = await sql`delete from ${sql.table(table)} where job_id = any(${ids}::text[])`.execute(db);
      add(table, Number(result.numAffectedRows ?? 0));
    }
    const gone = await db.deleteFrom('jobs').where('id', 'in', ids).executeTakeFirst();
    add('jobs', Number(gone.numDeletedRows));
  }
}

/**
 * Removes the waiting queue entries of these jobs: each one's own entry (its last and next
 * attempt's) and the shared entry it travels in when every job of that entry is the
 * workspace's. An entry a worker holds stays; its claim finds no job and does nothing.
 */
async function removeJobEntries(
  services: Resources,
  workspaceId: string,
  jobs: ReadonlyArray<{ id: string; attempts: number; queue_entry: string | null }>,
): Promise<number> {
  const { queues, db } = services;
  const candidates = new Set<string>();
  for (const job of jobs) {
    for (const attempt of new Set([Math.max(1, job.attempts), job.attempts + 1])) candidates.add(`${job.id}-a${attempt}`);
    if (job.queue_entry) candidates.add(job.queue_entry);
  }
  let removed = 0;
  for (const queue of [queues.jobs, queues.batchChildren]) {
    for (const entryId of candidates) {
      const entry = await queue.getJob(entryId);
      if (!entry) continue;
      const carried = entry.data.jobIds && entry.data.jobIds.length > 0 ? entry.data.jobIds : [entry.data.jobId];
      const others = await db
        .selectFrom('jobs')
        .select('id')
        .where('id', 'in', carried)
        .where('workspace_id', '<>', workspaceId)
        .limit(1)
        .execute();
      if (others.length > 0) continue;
      removed += await queue.remove(entryId);
    }
  }
  return removed;
}

/** Removes the waiting entries of the workspace's webhook deliveries (a page of the queue at a time). */
async function removeDeliveryEntries(services: Resources, webhookIds: readonly string[]): Promise<number> {
  if (webhookIds.length === 0) return 0;
  const queue = services.queues.webhookDeliveries;
  const ours = new Set(webhookIds);
  const doomed: string[] = [];
  for (let start = 0; ; start += DELETE_BATCH) {
    const entries = await queue.getJobs(['waiting', 'delayed', 'prioritized', 'wait'], start, start + DELETE_BATCH - 1);
    for (const entry of entries) if (entry?.id && ours.has(entry.data.webhookId)) doomed.push(entry.id);
    if (entries.length < DELETE_BATCH) break;
  }
  let removed = 0;
  for (const id of doomed) removed += await queue.remove(id);
  return removed;
}

/**
 * Deletes the keys under the service's Redis prefix that name the workspace (its rate-limit and
 * webhook send-limit counters), on every master of a cluster, one key per command.
 */
async function removeRedisKeys(redis: RedisClient, prefix: string, workspaceId: string): Promise<number> {
  const nodes = 'nodes' in redis ? redis.nodes('master') : [redis];
  let removed = 0;
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}:*${workspaceId}*`, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) removed += await redis.unlink(key);
    } while (cursor !== '0');
  }
  return removed;
}
