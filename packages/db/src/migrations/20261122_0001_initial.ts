import { type Kysely, sql } from 'kysely';

/**
 * The whole data model, designed once: tenants and keys, the credit ledger, jobs with their
 * paged results, batches, schedules and their runs, and idempotency records.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('workspaces')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().defaultTo('team'))
    .addColumn('monthly_quota', 'integer', (c) => c.notNull().check(sql`monthly_quota >= 0`))
    .addColumn('rate_limit_per_minute', 'integer', (c) => c.notNull().check(sql`rate_limit_per_minute > 0`))
    .addColumn('max_result_limit', 'integer', (c) => c.notNull().check(sql`max_result_limit > 0`))
    .addColumn('max_active_jobs', 'integer', (c) => c.notNull().check(sql`max_active_jobs > 0`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text')
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull().unique())
    .addColumn('role', 'text', (c) => c.notNull().defaultTo('owner'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('last_used_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('api_keys_workspace_idx').on('api_keys').column('workspace_id').execute();

  // One balance row per workspace, changed only in the same transaction as the ledger row that says why.
  await db.schema
    .createTable('credit_balances')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey().references('workspaces.id'))
    .addColumn('period_start', 'date', (c) => c.notNull())
    .addColumn('plan_used', 'bigint', (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`plan_used >= 0`),
    )
    .addColumn('plan_reserved', 'bigint', (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`plan_reserved >= 0`),
    )
    .addColumn('promo_balance', 'bigint', (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`promo_balance >= 0`),
    )
    .addColumn('promo_reserved', 'bigint', (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`promo_reserved >= 0`),
    )
    .addColumn('promo_expires_at', 'timestamptz')
    .addColumn('purchased_balance', 'bigint', (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`purchased_balance >= 0`),
    )
    .addColumn('purchased_reserved', 'bigint', (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`purchased_reserved >= 0`),
    )
    .addColumn('period_promo_spent', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('period_purchased_spent', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('units_used', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('units_reserved', 'bigint', (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`units_reserved >= 0`),
    )
    .addColumn('lifetime_purchased', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('lifetime_spent', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('promo_reserved_within_balance', sql`promo_reserved <= promo_balance`)
    .addCheckConstraint('purchased_reserved_within_balance', sql`purchased_reserved <= purchased_balance`)
    .execute();

  await db.schema
    .createTable('credit_reservations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('job_id', 'text', (c) => c.notNull().unique())
    .addColumn('plan_amount', 'bigint', (c) => c.notNull())
    .addColumn('promo_amount', 'bigint', (c) => c.notNull())
    .addColumn('purchased_amount', 'bigint', (c) => c.notNull())
    .addColumn('units', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('held', 'settled', 'released')`))
    .addColumn('settled_credits', 'bigint')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('closed_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('credit_reservations_held_idx')
    .on('credit_reservations')
    .column('workspace_id')
    .where(sql.ref('status'), '=', 'held')
    .execute();

  // Append-only ledger: grants, reservations, releases, settlements, expiries.
  await db.schema
    .createTable('credit_ledger')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('entry_type', 'text', (c) =>
      c.notNull().check(sql`entry_type in ('plan_allowance', 'grant', 'reserve', 'release', 'settle', 'expire')`),
    )
    .addColumn('bucket', 'text', (c) => c.check(sql`bucket in ('plan', 'promotional', 'purchased')`))
    .addColumn('credits', 'bigint', (c) => c.notNull())
    .addColumn('plan_credits', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('promo_credits', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('purchased_credits', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('units', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('reservation_id', 'text')
    .addColumn('job_id', 'text')
    .addColumn('period_start', 'date', (c) => c.notNull())
    .addColumn('note', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('credit_ledger_workspace_idx').on('credit_ledger').columns(['workspace_id', 'id']).execute();
  // A reservation is settled or released at most once, enforced by the database.
  await sql`create unique index credit_ledger_close_once on credit_ledger (reservation_id) where entry_type in ('settle', 'release')`.execute(
    db,
  );

  await db.schema
    .createTable('batches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('operation', 'text', (c) => c.notNull())
    .addColumn('requested_limit', 'integer', (c) => c.notNull())
    .addColumn('include_posts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('target_count', 'integer', (c) => c.notNull())
    .addColumn('cancel_requested_at', 'timestamptz')
    .addColumn('schedule_id', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('batches_workspace_idx').on('batches').columns(['workspace_id', 'id desc']).execute();

  await db.schema
    .createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('batch_id', 'text', (c) => c.references('batches.id'))
    .addColumn('batch_position', 'integer')
    .addColumn('schedule_id', 'text')
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('operation', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('normalized_target', 'text', (c) => c.notNull())
    .addColumn('request_key', 'text', (c) => c.notNull())
    .addColumn('requested_limit', 'integer', (c) => c.notNull())
    .addColumn('include_posts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('queued', 'running', 'completed', 'failed', 'cancelled')`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('progress_stage', 'text', (c) => c.notNull().defaultTo('queued'))
    .addColumn('progress_message', 'text')
    .addColumn('progress_current', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('progress_total', 'integer')
    .addColumn('heartbeat_at', 'timestamptz')
    .addColumn('next_attempt_at', 'timestamptz')
    .addColumn('cancel_requested_at', 'timestamptz')
    .addColumn('result_count', 'integer')
    .addColumn('billed_units', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('credit_rate', 'integer', (c) => c.notNull())
    .addColumn('results_per_credit', 'integer', (c) => c.notNull())
    .addColumn('base_credits', 'integer', (c) => c.notNull())
    .addColumn('reserved_credits', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('billed_credits', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'jsonb')
    .addColumn('cached', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('source_job_id', 'text')
    // Which attempt currently owns the running job; a stale owner's writes are ignored.
    .addColumn('lease_token', 'text')
    // Resume point of the provider: the cursor after the last saved page.
    .addColumn('checkpoint_cursor', 'text')
    .addColumn('checkpoint_pages', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('started_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('jobs_workspace_idx').on('jobs').columns(['workspace_id', 'id desc']).execute();
  await db.schema.createIndex('jobs_batch_idx').on('jobs').columns(['batch_id', 'batch_position']).execute();
  await sql`create index jobs_active_idx on jobs (workspace_id) where status in ('queued', 'running')`.execute(db);
  await sql`create index jobs_active_key_idx on jobs (workspace_id, request_key) where status in ('queued', 'running')`.execute(db);
  await sql`create index jobs_completed_key_idx on jobs (workspace_id, request_key, finished_at desc) where status = 'completed' and not cached`.execute(
    db,
  );
  await sql`create index jobs_running_heartbeat_idx on jobs (heartbeat_at) where status = 'running'`.execute(db);
  await sql`create index jobs_queued_idx on jobs (next_attempt_at) where status = 'queued'`.execute(db);

  // Results stored page by page so a 25,000-item job neither sits in one row nor in worker memory.
  await db.schema
    .createTable('job_result_pages')
    .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
    .addColumn('page_no', 'integer', (c) => c.notNull())
    .addColumn('item_count', 'integer', (c) => c.notNull())
    .addColumn('items', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('job_result_pages_pk', ['job_id', 'page_no'])
    .execute();

  await db.schema
    .createTable('schedules')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('operation', 'text', (c) => c.notNull())
    .addColumn('targets', 'jsonb', (c) => c.notNull())
    .addColumn('requested_limit', 'integer', (c) => c.notNull())
    .addColumn('include_posts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('frequency', 'text', (c) => c.notNull().check(sql`frequency in ('once', 'daily', 'weekly', 'monthly')`))
    .addColumn('timezone', 'text', (c) => c.notNull())
    .addColumn('starts_at', 'timestamptz', (c) => c.notNull())
    // starts_at exactly as the caller wrote it, echoed back with its offset.
    .addColumn('starts_at_text', 'text', (c) => c.notNull())
    .addColumn('next_run_at', 'timestamptz')
    .addColumn('last_run_at', 'timestamptz')
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('active', 'paused', 'completed')`))
    .addColumn('overlap_policy', 'text', (c) => c.notNull().defaultTo('skip'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('deleted_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('schedules_workspace_idx').on('schedules').columns(['workspace_id', 'id desc']).execute();
  await sql`create index schedules_due_idx on schedules (next_run_at) where status = 'active' and deleted_at is null`.execute(db);

  await db.schema
    .createTable('schedule_runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('schedule_id', 'text', (c) => c.notNull().references('schedules.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('trigger', 'text', (c) => c.notNull().check(sql`trigger in ('scheduled', 'manual')`))
    .addColumn('scheduled_for', 'timestamptz', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('queued', 'skipped_credits', 'skipped_overlap', 'failed')`))
    .addColumn('job_id', 'text')
    .addColumn('batch_id', 'text')
    .addColumn('error', 'jsonb')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('dispatched_at', 'timestamptz')
    .execute();
  // Each automatic occurrence exists at most once, whatever the number of scheduler processes.
  await sql`create unique index schedule_runs_occurrence_once on schedule_runs (schedule_id, scheduled_for) where trigger = 'scheduled'`.execute(
    db,
  );
  await db.schema.createIndex('schedule_runs_schedule_idx').on('schedule_runs').columns(['schedule_id', 'id desc']).execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('resource_type', 'text', (c) => c.notNull())
    .addColumn('resource_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['workspace_id', 'endpoint', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expiry_idx').on('idempotency_keys').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'idempotency_keys',
    'schedule_runs',
    'schedules',
    'job_result_pages',
    'jobs',
    'batches',
    'credit_ledger',
    'credit_reservations',
    'credit_balances',
    'api_keys',
    'workspaces',
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
