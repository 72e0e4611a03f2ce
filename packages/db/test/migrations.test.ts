import { sql } from 'kysely';
import { bundlePostsSpec } from '@sdx/catalog';
import { type Db, migrateDown, migrateDownThrough, migrateToLatest, migrationNames } from '@sdx/db';
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

  /** The migrations from `name` on, as migrateToLatest reports them after migrateDownThrough(name). */
  const from = (name: string) => migrationNames().filter((n) => n >= name);

  const reservationIndexes = async () =>
    (
      await sql<{ indexname: string }>`select indexname from pg_indexes where tablename = 'credit_reservations' order by indexname`.execute(
        db,
      )
    ).rows.map((r) => r.indexname);
  const bundleColumns = async () =>
    (
      await sql<{
        column_name: string;
      }>`select column_name from information_schema.columns where table_name = 'jobs' and column_name like 'bundle_%' order by 1`.execute(
        db,
      )
    ).rows.map((r) => r.column_name);

  const tables = async () =>
    (
      await sql<{ table_name: string }>`
        select table_name from information_schema.tables
        where table_schema = 'public' and table_name in ('users', 'memberships', 'sessions', 'invitations', 'audit_events') order by 1`.execute(
        db,
      )
    ).rows.map((r) => r.table_name);
  const columnsOf = async (table: string, names: string[]) =>
    (
      await sql<{
        column_name: string;
      }>`select column_name from information_schema.columns where table_name = ${table} and column_name = any(${names}) order by 1`.execute(
        db,
      )
    ).rows.map((r) => r.column_name);

  it('adds users, teams, sessions, invitations, key expiry and the append-only audit log, and removes them on the way down', async () => {
    expect(await tables()).toEqual(['audit_events', 'invitations', 'memberships', 'sessions', 'users']);
    expect(await columnsOf('api_keys', ['expires_at', 'created_by'])).toEqual(['created_by', 'expires_at']);
    await sql`insert into workspaces (id, name, monthly_quota, rate_limit_per_minute, max_result_limit, max_active_jobs) values ('ws_a', 'a', 10, 60, 100, 10)`.execute(
      db,
    );
    await sql`insert into audit_events (id, workspace_id, action, actor_type) values ('aud_1', 'ws_a', 'workspace.created', 'system')`.execute(
      db,
    );
    await expect(sql`update audit_events set action = 'x'`.execute(db)).rejects.toThrow(/append-only/);
    await expect(sql`delete from audit_events`.execute(db)).rejects.toThrow(/append-only/);

    await migrateDownThrough(db, '20261124_0009_key_lifecycle_and_audit');
    expect(await tables()).toEqual(['invitations', 'memberships', 'sessions', 'users']);
    expect(await columnsOf('api_keys', ['expires_at', 'created_by'])).toEqual([]);
    // A key made before: its prefix was the secret's first 13 characters; the shown prefix is 12.
    await sql`insert into api_keys (id, workspace_id, prefix, secret_hash) values ('key_old', 'ws_a', 'sdx_live_AbCd', 'h1')`.execute(db);
    await migrateDown(db);
    expect(await tables()).toEqual([]);
    expect(await columnsOf('workspaces', ['personal_user_id'])).toEqual([]);

    expect(await migrateToLatest(db)).toEqual(from('20261124_0008_users_and_teams'));
    expect(await tables()).toEqual(['audit_events', 'invitations', 'memberships', 'sessions', 'users']);
    const key = await db
      .selectFrom('api_keys')
      .select(['prefix', 'expires_at', 'created_by'])
      .where('id', '=', 'key_old')
      .executeTakeFirstOrThrow();
    expect(key).toEqual({ prefix: 'sdx_live_AbC', expires_at: null, created_by: null });
    // One user per email, whatever its case; one personal workspace per user.
    await sql`insert into users (id, email, password_hash) values ('usr_1', 'Ada@Example.com', 'h')`.execute(db);
    await expect(sql`insert into users (id, email, password_hash) values ('usr_2', 'ada@example.COM', 'h')`.execute(db)).rejects.toThrow(
      /users_email_key/,
    );
    await expect(sql`update workspaces set personal_user_id = 'usr_1' where id = 'ws_a'`.execute(db)).rejects.toThrow(
      /workspaces_personal_kind/,
    );
  });

  const jobColumns = async (names: string[]) =>
    (
      await sql<{
        column_name: string;
      }>`select column_name from information_schema.columns where table_name = 'jobs' and column_name = any(${names}) order by 1`.execute(
        db,
      )
    ).rows.map((r) => r.column_name);
  const jobIndexes = async () =>
    (
      await sql<{
        indexname: string;
      }>`select indexname from pg_indexes where tablename = 'jobs' and indexname in ('jobs_queued_idx', 'jobs_reconcile_idx')`.execute(db)
    ).rows.map((r) => r.indexname);

  it('records the deployment, enqueue mark and queue priority of jobs, existing jobs included, and removes them on the way down', async () => {
    const added = ['deployment', 'enqueued_at', 'queue_priority'];
    expect(await jobColumns(added)).toEqual(added);
    expect(await jobIndexes()).toEqual(['jobs_reconcile_idx']);
    await migrateDownThrough(db, '20261124_0011_job_deployment');
    expect(await jobColumns(added)).toEqual([]);
    expect(await jobIndexes()).toEqual(['jobs_queued_idx']);
    await sql`insert into workspaces (id, name, monthly_quota, rate_limit_per_minute, max_result_limit, max_active_jobs) values ('ws_d', 'd', 10, 60, 100, 10)`.execute(
      db,
    );
    await sql`
      insert into jobs (id, workspace_id, platform, operation, target, normalized_target, request_key, requested_limit, status, max_attempts, credit_rate, results_per_credit, base_credits)
      values ('job_old', 'ws_d', 'instagram', 'profile', 'natgeo', 'natgeo', 'k', 1, 'queued', 4, 1, 1, 0)`.execute(db);
    const before = new Date();
    expect(await migrateToLatest(db)).toEqual(from('20261124_0011_job_deployment'));
    const old = await db
      .selectFrom('jobs')
      .select(['deployment', 'enqueued_at', 'queue_priority'])
      .where('id', '=', 'job_old')
      .executeTakeFirstOrThrow();
    // A job admitted before deployments were recorded belongs to none (the first reconciler adopts it).
    expect(old.deployment).toBeNull();
    expect(old.queue_priority).toBe(1);
    expect(old.enqueued_at.getTime()).toBeGreaterThanOrEqual(before.getTime() - 1000);
    expect(await jobIndexes()).toEqual(['jobs_reconcile_idx']);
    await sql`delete from jobs where id = 'job_old'`.execute(db);
  });

  it('records bundle rates on jobs, filling them in for active bundle jobs, and removes them on the way down', async () => {
    expect(await bundleColumns()).toEqual(['bundle_base_credits', 'bundle_credit_rate', 'bundle_results_per_credit']);
    await migrateDownThrough(db, '20261124_0007_bundle_rates');
    expect(await bundleColumns()).toEqual([]);
    await sql`insert into workspaces (id, name, monthly_quota, rate_limit_per_minute, max_result_limit, max_active_jobs) values ('ws_m', 'm', 10, 60, 100, 10)`.execute(
      db,
    );
    const job = (id: string, status: string, includePosts: number) => sql`
      insert into jobs (id, workspace_id, platform, operation, target, normalized_target, request_key, requested_limit, include_posts, status,
                        max_attempts, credit_rate, results_per_credit, base_credits)
      values (${id}, 'ws_m', 'instagram', 'profile', 'natgeo', 'natgeo', ${id}, 1, ${includePosts}, ${status}, 4, 1, 1, 0)`;
    await job('job_bundle', 'queued', 5).execute(db);
    await job('job_plain', 'queued', 0).execute(db);
    await job('job_done', 'completed', 5).execute(db);
    expect(await migrateToLatest(db)).toEqual(from('20261124_0007_bundle_rates'));
    const posts = bundlePostsSpec('instagram')!;
    const rows = await db
      .selectFrom('jobs')
      .select(['id', 'bundle_credit_rate', 'bundle_results_per_credit', 'bundle_base_credits'])
      .orderBy('id')
      .execute();
    expect(rows).toEqual([
      {
        id: 'job_bundle',
        bundle_credit_rate: posts.credits_per_result,
        bundle_results_per_credit: posts.results_per_credit,
        bundle_base_credits: posts.base_credits,
      },
      { id: 'job_done', bundle_credit_rate: null, bundle_results_per_credit: null, bundle_base_credits: null },
      { id: 'job_plain', bundle_credit_rate: null, bundle_results_per_credit: null, bundle_base_credits: null },
    ]);
  });

  it('drops the held-reservation index no query reads, and restores it on the way down', async () => {
    expect(await reservationIndexes()).toEqual(['credit_reservations_job_id_key', 'credit_reservations_pkey']);
    await migrateDownThrough(db, '20261123_0006_drop_held_reservation_index');
    expect(await reservationIndexes()).toEqual([
      'credit_reservations_held_idx',
      'credit_reservations_job_id_key',
      'credit_reservations_pkey',
    ]);
    expect(await migrateToLatest(db)).toEqual(from('20261123_0006_drop_held_reservation_index'));
    expect(await reservationIndexes()).toEqual(['credit_reservations_job_id_key', 'credit_reservations_pkey']);
  });

  it('adds what new_only schedules need, and removes it on the way down', async () => {
    const tables = async () =>
      (
        await sql<{
          table_name: string;
        }>`select table_name from information_schema.tables where table_name in ('delivery_sets', 'delivered_items') order by 1`.execute(db)
      ).rows.map((r) => r.table_name);
    expect(await tables()).toEqual(['delivered_items', 'delivery_sets']);
    await migrateDownThrough(db, '20261124_0014_new_only_delivery');
    expect(await tables()).toEqual([]);
    const columns =
      await sql`select 1 from information_schema.columns where (table_name, column_name) in (('schedules', 'delivery'), ('jobs', 'new_only'))`.execute(
        db,
      );
    expect(columns.rows).toEqual([]);
    expect(await migrateToLatest(db)).toEqual(from('20261124_0014_new_only_delivery'));
    expect(await tables()).toEqual(['delivered_items', 'delivery_sets']);
  });

  it('records the request that admitted a job, and removes the column on the way down', async () => {
    const column = async () =>
      (await sql`select 1 from information_schema.columns where table_name = 'jobs' and column_name = 'request_id'`.execute(db)).rows
        .length;
    expect(await column()).toBe(1);
    await migrateDownThrough(db, '20261124_0015_job_request_id');
    expect(await column()).toBe(0);
    expect(await migrateToLatest(db)).toEqual(from('20261124_0015_job_request_id'));
    expect(await column()).toBe(1);
  });

  const indexesNamed = async (names: string[]) =>
    (
      await sql<{
        indexname: string;
      }>`select indexname from pg_indexes where tablename = 'jobs' and indexname = any(${names}) order by 1`.execute(db)
    ).rows.map((r) => r.indexname);

  it('adds the indexes of the paged, filtered job list, and removes them on the way down', async () => {
    const added = ['jobs_schedule_idx', 'jobs_workspace_operation_idx', 'jobs_workspace_platform_idx', 'jobs_workspace_status_idx'];
    expect(await indexesNamed(added)).toEqual(added);
    await migrateDownThrough(db, '20261125_0016_list_indexes');
    expect(await indexesNamed(added)).toEqual([]);
    expect(await migrateToLatest(db)).toEqual(from('20261125_0016_list_indexes'));
    expect(await indexesNamed(added)).toEqual(added);
  });

  it('adds result_expired and the retention indexes, existing jobs kept, and removes them on the way down', async () => {
    const added = ['jobs_retention_idx', 'jobs_source_idx'];
    expect(await indexesNamed(added)).toEqual(added);
    expect(await jobColumns(['result_expired'])).toEqual(['result_expired']);
    await migrateDownThrough(db, '20261125_0017_result_retention');
    expect(await indexesNamed(added)).toEqual([]);
    expect(await jobColumns(['result_expired'])).toEqual([]);
    await sql`insert into workspaces (id, name, monthly_quota, rate_limit_per_minute, max_result_limit, max_active_jobs) values ('ws_r', 'r', 10, 60, 100, 10)`.execute(
      db,
    );
    await sql`
      insert into jobs (id, workspace_id, platform, operation, target, normalized_target, request_key, requested_limit, status, max_attempts, credit_rate, results_per_credit, base_credits, finished_at)
      values ('job_kept', 'ws_r', 'instagram', 'profile', 'natgeo', 'natgeo', 'k', 1, 'completed', 4, 1, 1, 0, now())`.execute(db);
    expect(await migrateToLatest(db)).toEqual(from('20261125_0017_result_retention'));
    // A job completed before retention existed keeps its result until the purge's turn comes.
    expect(await db.selectFrom('jobs').select(['id', 'result_expired']).where('id', '=', 'job_kept').executeTakeFirst()).toEqual({
      id: 'job_kept',
      result_expired: false,
    });
    expect(await indexesNamed(added)).toEqual(added);
  });

  it('adds the webhook tables (endpoints, outbox, deliveries), and removes them on the way down', async () => {
    const tables = async () =>
      (
        await sql<{
          table_name: string;
        }>`select table_name from information_schema.tables where table_name like 'webhook%' order by 1`.execute(db)
      ).rows.map((r) => r.table_name);
    expect(await tables()).toEqual(['webhook_deliveries', 'webhook_events', 'webhooks']);
    await migrateDownThrough(db, '20261125_0020_webhooks');
    expect(await tables()).toEqual([]);
    expect(await migrateToLatest(db)).toEqual(from('20261125_0020_webhooks'));
    expect(await tables()).toEqual(['webhook_deliveries', 'webhook_events', 'webhooks']);
    // One event of a type per subject; internal batch checks may repeat.
    await sql`insert into webhook_events (id, workspace_id, type, subject_id) values ('evt_1', 'ws_x', 'job.completed', 'job_1')`.execute(
      db,
    );
    await expect(
      sql`insert into webhook_events (id, workspace_id, type, subject_id) values ('evt_2', 'ws_x', 'job.completed', 'job_1')`.execute(db),
    ).rejects.toThrow(/webhook_events_subject_key/);
    await sql`insert into webhook_events (id, workspace_id, type, subject_id) values ('evt_3', 'ws_x', 'batch.child_ended', 'bat_1'), ('evt_4', 'ws_x', 'batch.child_ended', 'bat_1')`.execute(
      db,
    );
    await sql`delete from webhook_events`.execute(db);
  });

  it('adds users.default_workspace_id, cleared when its workspace goes, and removes it on the way down', async () => {
    const columns = async () =>
      (
        await sql<{
          column_name: string;
        }>`select column_name from information_schema.columns where table_name = 'users' and column_name = 'default_workspace_id'`.execute(
          db,
        )
      ).rows.map((r) => r.column_name);
    expect(await columns()).toEqual(['default_workspace_id']);
    await migrateDownThrough(db, '20261126_0021_default_workspace');
    expect(await columns()).toEqual([]);
    expect(await migrateToLatest(db)).toEqual(from('20261126_0021_default_workspace'));
    expect(await columns()).toEqual(['default_workspace_id']);
    await sql`insert into workspaces (id, name, monthly_quota, rate_limit_per_minute, max_result_limit, max_active_jobs) values ('ws_dflt', 'd', 10, 60, 100, 10)`.execute(
      db,
    );
    await sql`insert into users (id, email, password_hash, default_workspace_id) values ('usr_dflt', 'dflt@example.com', 'x', 'ws_dflt')`.execute(
      db,
    );
    await sql`delete from workspaces where id = 'ws_dflt'`.execute(db);
    expect(await db.selectFrom('users').select('default_workspace_id').where('id', '=', 'usr_dflt').executeTakeFirst()).toEqual({
      default_workspace_id: null,
    });
    await sql`delete from users where id = 'usr_dflt'`.execute(db);
  });

  it('adds key kinds and the OAuth tables, and on the way down revokes OAuth grants and removes them', async () => {
    const oauthTables = async () =>
      (
        await sql<{ table_name: string }>`
          select table_name from information_schema.tables
          where table_schema = 'public' and table_name in ('oauth_clients', 'oauth_codes', 'oauth_tokens') order by 1`.execute(db)
      ).rows.map((r) => r.table_name);
    expect(await oauthTables()).toEqual(['oauth_clients', 'oauth_codes', 'oauth_tokens']);
    expect(await columnsOf('api_keys', ['kind', 'oauth_client_id'])).toEqual(['kind', 'oauth_client_id']);
    await sql`insert into workspaces (id, name, monthly_quota, rate_limit_per_minute, max_result_limit, max_active_jobs) values ('ws_oauth', 'o', 10, 60, 100, 10)`.execute(
      db,
    );
    await sql`insert into api_keys (id, workspace_id, prefix, secret_hash) values ('key_plain', 'ws_oauth', 'sdx_live_abc', 'oauth_mig_h1')`.execute(
      db,
    );
    expect((await sql<{ kind: string }>`select kind from api_keys where id = 'key_plain'`.execute(db)).rows).toEqual([{ kind: 'api_key' }]);
    await sql`insert into oauth_clients (id, client_name, redirect_uris, metadata) values ('oac_1', 'agent', '{https://a.example/cb}', '{}')`.execute(
      db,
    );
    await sql`insert into api_keys (id, workspace_id, prefix, secret_hash, kind, oauth_client_id) values ('key_grant', 'ws_oauth', 'sdx_oat_abcd', 'oauth_mig_h2', 'oauth', 'oac_1')`.execute(
      db,
    );
    await expect(
      sql`insert into api_keys (id, workspace_id, prefix, secret_hash, oauth_client_id) values ('key_bad', 'ws_oauth', 'p', 'oauth_mig_h3', 'oac_1')`.execute(
        db,
      ),
    ).rejects.toThrow(/api_keys_oauth_client/);
    await sql`insert into oauth_tokens (token_hash, key_id, kind, expires_at) values ('t1', 'key_grant', 'access', now() + interval '1 hour')`.execute(
      db,
    );

    await migrateDownThrough(db, '20261129_0025_oauth');
    expect(await oauthTables()).toEqual([]);
    expect(await columnsOf('api_keys', ['kind', 'oauth_client_id'])).toEqual([]);
    const keys = (
      await sql<{
        id: string;
        revoked: boolean;
      }>`select id, revoked_at is not null as revoked from api_keys where workspace_id = 'ws_oauth' order by id`.execute(db)
    ).rows;
    expect(keys).toEqual([
      { id: 'key_grant', revoked: true },
      { id: 'key_plain', revoked: false },
    ]);
    expect(await migrateToLatest(db)).toEqual(from('20261129_0025_oauth'));
    expect(await oauthTables()).toEqual(['oauth_clients', 'oauth_codes', 'oauth_tokens']);
    await sql`delete from api_keys where workspace_id = 'ws_oauth'`.execute(db);
    await sql`delete from workspaces where id = 'ws_oauth'`.execute(db);
  });

  it("0028 adds the attempts' live sources and the sources' health, removed with their job, and drops them on the way down", async () => {
    const healthTables = async () =>
      (
        await sql<{ table_name: string }>`
          select table_name from information_schema.tables
          where table_schema = 'public' and table_name in ('job_attempt_sources', 'source_health') order by 1`.execute(db)
      ).rows.map((r) => r.table_name);
    expect(await healthTables()).toEqual(['job_attempt_sources', 'source_health']);
    await sql`insert into workspaces (id, name, monthly_quota, rate_limit_per_minute, max_result_limit, max_active_jobs) values ('ws_src', 's', 10, 60, 100, 10)`.execute(
      db,
    );
    await sql`
      insert into jobs (id, workspace_id, platform, operation, target, normalized_target, request_key, requested_limit, status, max_attempts, credit_rate, results_per_credit, base_credits)
      values ('job_src', 'ws_src', 'youtube', 'shorts', 'x', 'x', 'k', 10, 'running', 4, 1, 1, 0)`.execute(db);
    await sql`insert into job_attempt_sources (job_id, attempt, seq, source, provider, outcome, error_code) values ('job_src', 1, 0, 'official', 'youtube-data-api', 'failed', 'upstream_auth')`.execute(
      db,
    );
    await expect(
      sql`insert into job_attempt_sources (job_id, attempt, seq, source, provider, outcome) values ('job_src', 1, 1, 'sandbox', 'x', 'served')`.execute(
        db,
      ),
    ).rejects.toThrow(/check/);
    await sql`delete from jobs where id = 'job_src'`.execute(db);
    expect((await sql<{ n: number }>`select count(*)::int as n from job_attempt_sources`.execute(db)).rows).toEqual([{ n: 0 }]);

    await migrateDownThrough(db, '20261130_0028_source_health');
    expect(await healthTables()).toEqual([]);
    expect(await migrateToLatest(db)).toEqual(from('20261130_0028_source_health'));
    expect(await healthTables()).toEqual(['job_attempt_sources', 'source_health']);
    await sql`delete from workspaces where id = 'ws_src'`.execute(db);
  });
  it('0031 adds the mail requests of resets and resends, and drops them on the way down', async () => {
    const requestTables = async () =>
      (
        await sql<{
          table_name: string;
        }>`select table_name from information_schema.tables where table_schema = 'public' and table_name = 'mail_requests'`.execute(db)
      ).rows.map((r) => r.table_name);
    expect(await requestTables()).toEqual(['mail_requests']);
    await sql`insert into mail_requests (id, kind, email) values ('mrq_1', 'reset_password', 'a@example.com')`.execute(db);
    await expect(
      sql`insert into mail_requests (id, kind, email) values ('mrq_2', 'invitation', 'a@example.com')`.execute(db),
    ).rejects.toThrow(/check/);
    const row = await sql<{
      attempts: number;
      due: boolean;
    }>`select attempts, next_attempt_at <= now() as due from mail_requests where id = 'mrq_1'`.execute(db);
    expect(row.rows).toEqual([{ attempts: 0, due: true }]);

    await migrateDownThrough(db, '20261207_0031_mail_requests');
    expect(await requestTables()).toEqual([]);
    expect(await migrateToLatest(db)).toEqual(from('20261207_0031_mail_requests'));
    expect(await requestTables()).toEqual(['mail_requests']);
  });

  it("0035 adds the plans' tables (a workspace without a plan row is on free), removed with their workspace, and drops them on the way down", async () => {
    const planTables = async () =>
      (
        await sql<{ table_name: string }>`
          select table_name from information_schema.tables
          where table_schema = 'public' and table_name in ('workspace_plans', 'billing_subscriptions', 'billing_invoices', 'billing_prices') order by 1`.execute(
          db,
        )
      ).rows.map((r) => r.table_name);
    expect(await planTables()).toEqual(['billing_invoices', 'billing_prices', 'billing_subscriptions', 'workspace_plans']);
    // The previous release's insert of a workspace still works: it has no plan row.
    await sql`insert into workspaces (id, name, monthly_quota, rate_limit_per_minute, max_result_limit, max_active_jobs) values ('ws_plan', 'p', 10, 60, 100, 10)`.execute(
      db,
    );
    await sql`insert into workspace_plans (workspace_id, plan_id) values ('ws_plan', 'starter')`.execute(db);
    await sql`insert into billing_subscriptions (id, workspace_id, plan_id, status) values ('sub_1', 'ws_plan', 'starter', 'active')`.execute(
      db,
    );
    await expect(
      sql`insert into billing_subscriptions (id, workspace_id, plan_id, status) values ('sub_2', 'ws_plan', 'starter', 'trialing')`.execute(
        db,
      ),
    ).rejects.toThrow(/check/);
    await sql`insert into billing_invoices (id, workspace_id, subscription_id, status, currency, created_at) values ('in_1', 'ws_plan', 'sub_1', 'paid', 'usd', now())`.execute(
      db,
    );
    await sql`delete from workspaces where id = 'ws_plan'`.execute(db);
    for (const table of ['workspace_plans', 'billing_subscriptions', 'billing_invoices']) {
      expect((await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(db)).rows).toEqual([{ n: 0 }]);
    }

    await migrateDownThrough(db, '20261207_0035_plans');
    expect(await planTables()).toEqual([]);
    expect(await migrateToLatest(db)).toEqual(from('20261207_0035_plans'));
    expect(await planTables()).toEqual(['billing_invoices', 'billing_prices', 'billing_subscriptions', 'workspace_plans']);
  });
});
