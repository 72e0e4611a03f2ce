import { type Kysely, sql } from 'kysely';

/**
 * Webhooks (extensions.md 5).
 *
 * - webhooks: a workspace's endpoints, each with the event types it takes and its signing
 *   secret; during a rotation the previous secret signs beside the new one until it expires.
 * - webhook_events: the transactional outbox. A row is written in the transaction of the change
 *   it tells of (a job's or batch's end, a schedule run's dispatch or skip), only when the
 *   workspace has an enabled webhook that takes it; the dispatcher renders its body and makes
 *   its deliveries (dispatched_at). `batch.child_ended` rows are internal: a batch child ended,
 *   and the dispatcher decides from the committed state whether the batch did.
 * - webhook_deliveries: one event to one webhook, attempted until it succeeds or its retry
 *   schedule is spent; an attempt holds a lease while it sends.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhooks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('events', sql`text[]`, (c) => c.notNull())
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_expires_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // The outbox writers' check (does an enabled webhook of the workspace take this event?) reads this.
  await sql`create index webhooks_enabled_idx on webhooks (workspace_id) where enabled`.execute(db);
  await db.schema.createIndex('webhooks_workspace_idx').on('webhooks').columns(['workspace_id', 'id desc']).execute();

  await db.schema
    .createTable('webhook_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text')
    // A test send names its one webhook; other events go to every webhook that takes them.
    .addColumn('webhook_id', 'text')
    .addColumn('body', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('dispatched_at', 'timestamptz')
    .execute();
  // One event of a type per subject: a job ends once, a batch ends once, a run is dispatched once.
  await sql`create unique index webhook_events_subject_key on webhook_events (type, subject_id) where type <> 'batch.child_ended'`.execute(
    db,
  );
  await sql`create index webhook_events_undispatched_idx on webhook_events (id) where dispatched_at is null`.execute(db);

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('event_id', 'text', (c) => c.notNull().references('webhook_events.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c
        .notNull()
        .defaultTo('pending')
        .check(sql`status in ('pending', 'succeeded', 'failed')`),
    )
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('response_status', 'integer')
    .addColumn('error', 'text')
    .addColumn('next_attempt_at', 'timestamptz')
    .addColumn('lease_token', 'text')
    .addColumn('lease_until', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('delivered_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('webhook_deliveries_log_idx').on('webhook_deliveries').columns(['webhook_id', 'id desc']).execute();
  await sql`create index webhook_deliveries_pending_idx on webhook_deliveries (next_attempt_at) where status = 'pending'`.execute(db);
  await db.schema.createIndex('webhook_deliveries_event_idx').on('webhook_deliveries').column('event_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('webhook_events').execute();
  await db.schema.dropTable('webhooks').execute();
}
