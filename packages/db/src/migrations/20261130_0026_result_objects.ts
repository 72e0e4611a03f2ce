import { type Kysely, sql } from 'kysely';

/**
 * Result pages in an object store (RESULT_STORE=s3, extensions-2.md 5). A page's items are kept
 * either in its row (`items`, as before) or as an object of the result bucket (`object_key`,
 * compressed NDJSON; `items` null), never both; `stored_bytes` is the object's size. The last
 * pages of jobs completed together share one object, each a gzip member of its own at
 * `object_offset` (`stored_bytes` long; null offset: the whole object is the page). The index on
 * `object_key` tells the sweeper and the deletions which objects a row still names. Additive:
 * the previous release writes and reads `items` as before, and a page it wrote stays readable.
 * The check is added NOT VALID (no scan of the existing pages, which all satisfy it).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table job_result_pages
      alter column items drop not null,
      add column object_key text,
      add column object_offset bigint,
      add column stored_bytes integer`.execute(db);
  await sql`create index job_result_pages_object on job_result_pages (object_key) where object_key is not null`.execute(db);
  await sql`
    alter table job_result_pages
      add constraint job_result_pages_stored check (items is not null or object_key is not null) not valid`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Pages held as objects cannot go back into rows here: `npm run admin -- move-results --to postgres` first.
  await sql`alter table job_result_pages drop constraint job_result_pages_stored`.execute(db);
  await sql`delete from job_result_pages where items is null`.execute(db);
  await sql`drop index job_result_pages_object`.execute(db);
  await sql`alter table job_result_pages drop column stored_bytes, drop column object_offset, drop column object_key, alter column items set not null`.execute(
    db,
  );
}
