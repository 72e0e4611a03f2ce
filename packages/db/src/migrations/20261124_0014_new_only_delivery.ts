import { type Kysely, sql } from 'kysely';

/**
 * Monitoring schedules that deliver only what is new (extensions.md 10).
 * - schedules.delivery: `all` (as before) or `new_only`; jobs.new_only marks the jobs such a
 *   schedule dispatches.
 * - delivery_sets: one per (schedule, platform, operation, target): the identity of a feed.
 * - delivered_items: the items already delivered from a feed, as 64-bit hashes of their identity
 *   (the item's ID, or its content when it has none). A row is 16 bytes of data, so a feed of
 *   25,000 followers is about 2 MB with its index, and it only grows by items never seen before.
 *   An occurrence claims its new items by inserting their hashes in its completion transaction:
 *   a failed or cancelled occurrence claims nothing, and of two overlapping occurrences only one
 *   can claim an item (the primary key).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table schedules add column delivery text not null default 'all' check (delivery in ('all', 'new_only'))`.execute(db);
  await sql`alter table jobs add column new_only boolean not null default false`.execute(db);
  await sql`
    create table delivery_sets (
      id bigserial primary key,
      schedule_id text not null references schedules (id),
      platform text not null,
      operation text not null,
      target text not null,
      unique (schedule_id, platform, operation, target)
    )
  `.execute(db);
  await sql`
    create table delivered_items (
      set_id bigint not null references delivery_sets (id) on delete cascade,
      item_hash bigint not null,
      primary key (set_id, item_hash)
    )
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table if exists delivered_items`.execute(db);
  await sql`drop table if exists delivery_sets`.execute(db);
  await sql`alter table jobs drop column if exists new_only`.execute(db);
  await sql`alter table schedules drop column if exists delivery`.execute(db);
}
