import { type Kysely, sql } from 'kysely';

/**
 * Delivery to a customer's bucket (extensions-2.md 5):
 * - destinations: a workspace's S3 bucket (name, bucket, prefix, region, endpoint, path style,
 *   access key ID, format) with its secret access key sealed (AES-256-GCM under SECRETS_KEY:
 *   the column only takes sealed values);
 * - jobs and batches gain their delivery: the destination, the object key (fixed at admission),
 *   status pending|succeeded|failed, attempts, the last error, when it was delivered, when the
 *   next attempt is due and until when an attempt holds it. A job or batch without a destination
 *   has them all null, which costs it nothing;
 * - the delivery poll reads two partial indexes: the jobs whose delivery is pending and that
 *   ended (a job enters it as it ends), and the batches whose delivery is pending;
 * - schedules gain destination_id, given to every occurrence's job or batch.
 * No foreign key to destinations: a deleted destination leaves its pending deliveries to fail
 * (and its schedules without one), while jobs keep naming it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // Every lock first, in the order the running release's admission takes them (a batch before
  // its jobs), so the migration never holds one table while waiting for another it holds.
  await sql`lock table batches, jobs, schedules in access exclusive mode`.execute(db);
  await sql`
    create table destinations (
      id text primary key,
      workspace_id text not null references workspaces (id) on delete cascade,
      name text not null,
      type text not null check (type = 's3'),
      bucket text not null,
      prefix text not null default '',
      region text not null,
      endpoint text,
      force_path_style boolean not null default false,
      access_key_id text not null,
      secret_access_key text not null check (secret_access_key like 'sealed:v1:%'),
      format text not null check (format in ('json', 'ndjson', 'csv', 'xlsx')),
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index destinations_workspace_idx on destinations (workspace_id, id desc)`.execute(db);

  for (const table of ['jobs', 'batches']) {
    await sql`
      alter table ${sql.table(table)}
        add column destination_id text,
        add column delivery_status text check (delivery_status in ('pending', 'succeeded', 'failed')),
        add column delivery_key text,
        add column delivery_attempts integer not null default 0,
        add column delivery_error text,
        add column delivered_at timestamptz,
        add column delivery_next_attempt_at timestamptz,
        add column delivery_lease_until timestamptz`.execute(db);
    await sql`alter table ${sql.table(table)} add constraint ${sql.ref(`${table}_delivery_destination`)} check ((destination_id is null) = (delivery_status is null))`.execute(
      db,
    );
  }
  await sql`
    create index jobs_delivery_due_idx on jobs (delivery_next_attempt_at)
    where delivery_status = 'pending' and status in ('completed', 'failed', 'cancelled')`.execute(db);
  await sql`create index batches_delivery_due_idx on batches (delivery_next_attempt_at) where delivery_status = 'pending'`.execute(db);

  await sql`alter table schedules add column destination_id text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table schedules drop column if exists destination_id`.execute(db);
  await sql`drop index if exists batches_delivery_due_idx`.execute(db);
  await sql`drop index if exists jobs_delivery_due_idx`.execute(db);
  for (const table of ['jobs', 'batches']) {
    await sql`
      alter table ${sql.table(table)}
        drop constraint if exists ${sql.ref(`${table}_delivery_destination`)},
        drop column if exists delivery_lease_until,
        drop column if exists delivery_next_attempt_at,
        drop column if exists delivered_at,
        drop column if exists delivery_error,
        drop column if exists delivery_attempts,
        drop column if exists delivery_key,
        drop column if exists delivery_status,
        drop column if exists destination_id`.execute(db);
  }
  await sql`drop table if exists destinations`.execute(db);
}
