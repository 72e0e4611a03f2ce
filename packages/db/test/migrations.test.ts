import { sql } from 'kysely';
import { bundlePostsSpec } from '@sdx/catalog';
import { type Db, migrateDown, migrateToLatest } from '@sdx/db';
import { createTestDb } from '@sdx/testing';

/** The latest migrations, down and up again, on a database migrated to the latest schema. */
describe('migrations', () => {
  let database: Awaited<ReturnType<typeof createTestDb>>;
  let db: Db;

  beforeAll(async () => {
    database = await createTestDb();
    db = database.db;
  });

  afterAll(() => database.drop());

  const reservationIndexes = async () =>
    (await sql<{ indexname: string }>`select indexname from pg_indexes where tablename = 'credit_reservations' order by indexname`.execute(db)).rows.map((r) => r.indexname);
  const bundleColumns = async () =>
    (await sql<{ column_name: string }>`select column_name from information_schema.columns where table_name = 'jobs' and column_name like 'bundle_%' order by 1`.execute(db)).rows.map(
      (r) => r.column_name,
    );

  const jobColumns = async (names: string[]) =>
    (await sql<{ column_name: string }>`select column_name from information_schema.columns where table_name = 'jobs' and column_name = any(${names}) order by 1`.execute(db)).rows.map(
      (r) => r.column_name,
    );
  const jobIndexes = async () =>
    (await sql<{ indexname: string }>`select indexname from pg_indexes where tablename = 'jobs' and indexname in ('jobs_queued_idx', 'jobs_reconcile_idx')`.execute(db)).rows.map((r) => r.indexname);

  it('records the deployment, enqueue mark and queue priority of jobs, existing jobs included, and removes them on the way down', async () => {
    const added = ['deployment', 'enqueued_at', 'queue_priority'];
    expect(await jobColumns(added)).toEqual(added);
    expect(await jobIndexes()).toEqual(['jobs_reconcile_idx']);
    await migrateDown(db);
    expect(await jobColumns(added)).toEqual([]);
    expect(await jobIndexes()).toEqual(['jobs_queued_idx']);
    await sql`insert into workspaces (id, name, monthly_quota, rate_limit_per_minute, max_result_limit, max_active_jobs) values ('ws_d', 'd', 10, 60, 100, 10)`.execute(db);
    await sql`
      insert into jobs (id, workspace_id, platform, operation, target, normalized_target, request_key, requested_limit, status, max_attempts, credit_rate, results_per_credit, base_credits)
      values ('job_old', 'ws_d', 'instagram', 'profile', 'natgeo', 'natgeo', 'k', 1, 'queued', 4, 1, 1, 0)`.execute(db);
    const before = new Date();
    expect(await migrateToLatest(db)).toEqual(['20261124_0011_job_deployment']);
    const old = await db.selectFrom('jobs').select(['deployment', 'enqueued_at', 'queue_priority']).where('id', '=', 'job_old').executeTakeFirstOrThrow();
    // A job admitted before deployments were recorded belongs to none (the first reconciler adopts it).
    expect(old.deployment).toBeNull();
    expect(old.queue_priority).toBe(1);
    expect(old.enqueued_at.getTime()).toBeGreaterThanOrEqual(before.getTime() - 1000);
    expect(await jobIndexes()).toEqual(['jobs_reconcile_idx']);
    await sql`delete from jobs where id = 'job_old'`.execute(db);
  });

  it('records bundle rates on jobs, filling them in for active bundle jobs, and removes them on the way down', async () => {
    expect(await bundleColumns()).toEqual(['bundle_base_credits', 'bundle_credit_rate', 'bundle_results_per_credit']);
    await migrateDown(db);
    await migrateDown(db);
    expect(await bundleColumns()).toEqual([]);
    await sql`insert into workspaces (id, name, monthly_quota, rate_limit_per_minute, max_result_limit, max_active_jobs) values ('ws_m', 'm', 10, 60, 100, 10)`.execute(db);
    const job = (id: string, status: string, includePosts: number) => sql`
      insert into jobs (id, workspace_id, platform, operation, target, normalized_target, request_key, requested_limit, include_posts, status,
                        max_attempts, credit_rate, results_per_credit, base_credits)
      values (${id}, 'ws_m', 'instagram', 'profile', 'natgeo', 'natgeo', ${id}, 1, ${includePosts}, ${status}, 4, 1, 1, 0)`;
    await job('job_bundle', 'queued', 5).execute(db);
    await job('job_plain', 'queued', 0).execute(db);
    await job('job_done', 'completed', 5).execute(db);
    expect(await migrateToLatest(db)).toEqual(['20261124_0007_bundle_rates', '20261124_0011_job_deployment']);
    const posts = bundlePostsSpec('instagram')!;
    const rows = await db.selectFrom('jobs').select(['id', 'bundle_credit_rate', 'bundle_results_per_credit', 'bundle_base_credits']).orderBy('id').execute();
    expect(rows).toEqual([
      { id: 'job_bundle', bundle_credit_rate: posts.credits_per_result, bundle_results_per_credit: posts.results_per_credit, bundle_base_credits: posts.base_credits },
      { id: 'job_done', bundle_credit_rate: null, bundle_results_per_credit: null, bundle_base_credits: null },
      { id: 'job_plain', bundle_credit_rate: null, bundle_results_per_credit: null, bundle_base_credits: null },
    ]);
  });

  it('drops the held-reservation index no query reads, and restores it on the way down', async () => {
    expect(await reservationIndexes()).toEqual(['credit_reservations_job_id_key', 'credit_reservations_pkey']);
    await migrateDown(db);
    await migrateDown(db);
    await migrateDown(db);
    expect(await reservationIndexes()).toEqual(['credit_reservations_held_idx', 'credit_reservations_job_id_key', 'credit_reservations_pkey']);
    expect(await migrateToLatest(db)).toEqual(['20261123_0006_drop_held_reservation_index', '20261124_0007_bundle_rates', '20261124_0011_job_deployment']);
    expect(await reservationIndexes()).toEqual(['credit_reservations_job_id_key', 'credit_reservations_pkey']);
  });
});
