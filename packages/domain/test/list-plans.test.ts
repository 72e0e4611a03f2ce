import { sql } from 'kysely';
import { type JobFilters, listBatchViews, listJobs, listScheduleViews, purgeExpiredResults, type Tenant } from '@sdx/domain/testing';
import { explain, indexesIn, nodeTypesIn, recordingStatements, startTestStack, type TestStack } from '@sdx/testing';

/**
 * Every paged, filtered list reads an index (migration 0016), and so does the retention purge
 * (migration 0017): with a workspace of tens of thousands of jobs beside another one, the plans
 * of the statements the domain functions really send (recorded, then explained with their
 * parameters) read the index meant for them and never scan the table nor sort it.
 */

let stack: TestStack;
let tenant: Tenant;
let batchId: string;
let scheduleId: string;
const JOBS = 30_000;

beforeAll(async () => {
  stack = await startTestStack();
  const db = stack.runtime.db;
  const ws = await stack.workspace({ credits: 10_000, rateLimitPerMinute: 100_000 });
  const neighbour = await stack.workspace({ credits: 10_000 });
  tenant = {
    workspace: await db.selectFrom('workspaces').selectAll().where('id', '=', ws.workspaceId).executeTakeFirstOrThrow(),
    keyId: null,
    role: 'owner',
  };
  const batch = await stack.api.post('/v1/batches', {
    headers: ws.auth,
    body: { platform: 'instagram', operation: 'profile', targets: ['plan_a', 'plan_b'] },
  });
  const schedule = await stack.api.post('/v1/schedules', {
    headers: ws.auth,
    body: {
      name: 'plans',
      platform: 'instagram',
      operation: 'profile',
      targets: ['nasa'],
      frequency: 'daily',
      timezone: 'UTC',
      starts_at: '2031-01-01T00:00:00Z',
    },
  });
  batchId = batch.body.id;
  scheduleId = schedule.body.id;
  // A busy workspace: mostly completed instagram profiles, a few of everything a filter asks for,
  // in ID (time) order; and a smaller neighbour whose jobs are all newer (their IDs sort after),
  // so that reading the primary key backwards would pass all of them before the first of ours.
  const insertJobs = (workspaceId: string, prefix: string, count: number) => sql`
    insert into jobs (id, workspace_id, platform, operation, target, normalized_target, request_key, requested_limit, status,
                      max_attempts, credit_rate, results_per_credit, base_credits, batch_id, batch_position, schedule_id, finished_at)
    select ${prefix} || lpad(g::text, 8, '0'), ${workspaceId},
           case when g % 200 = 0 then 'twitter' else 'instagram' end,
           case when g % 200 = 0 then 'followers' when g % 250 = 0 then 'followers' else 'profile' end,
           't' || g, 't' || g, 'k' || g, 1,
           case when g % 300 = 0 then 'failed' else 'completed' end,
           4, 1, 1, 0,
           case when g % 1000 = 0 then ${batchId} end, case when g % 1000 = 0 then g end,
           case when g % 400 = 0 then ${scheduleId} end,
           now() - make_interval(secs => ${count} - g)
    from generate_series(1, ${count}::int) g
  `;
  await insertJobs(ws.workspaceId, 'job_00plan', JOBS).execute(db);
  await insertJobs(neighbour.workspaceId, 'job_01nbr', JOBS / 5).execute(db);
  // Batches and schedules by the thousand, copies of the ones made above.
  const copies = (table: 'batches' | 'schedules', id: string, workspaceId: string, tag: string, count: number) => sql`
    insert into ${sql.table(table)}
    select (jsonb_populate_record(null::${sql.table(table)}, to_jsonb(t) || jsonb_build_object('id', ${tag} || lpad(g::text, 8, '0'), 'workspace_id', ${workspaceId}::text))).*
    from ${sql.table(table)} t, generate_series(1, ${count}::int) g where t.id = ${id}
  `;
  for (const [workspaceId, tag, count] of [
    [ws.workspaceId, '00own', 3000],
    [neighbour.workspaceId, '01nbr', 600],
  ] as const) {
    await copies('batches', batchId, workspaceId, `bat_${tag}`, count).execute(db);
    await copies('schedules', scheduleId, workspaceId, `sch_${tag}`, count).execute(db);
  }
  // Result pages of one job in ten.
  await sql`
    insert into job_result_pages (job_id, page_no, item_count, items)
    select id, 0, 1, '[{"id": "1"}]'::jsonb from jobs where id like 'job_0%' and right(id, 1) = '0'
  `.execute(db);
  await sql`analyze jobs`.execute(db);
  await sql`analyze job_result_pages`.execute(db);
  await sql`analyze batches`.execute(db);
  await sql`analyze schedules`.execute(db);
}, 120_000);
afterAll(async () => {
  await stack.close();
});

/** The plans of the statements `run` sends, with the page query (the one ordered by ID) last. */
async function plansOf(
  run: (db: TestStack['runtime']['db']) => Promise<unknown>,
): Promise<Array<{ sql: string; indexes: string[]; nodes: string[] }>> {
  const recorder = recordingStatements(stack.runtime.db);
  await run(recorder.db);
  const plans = [];
  for (const statement of recorder.statements) {
    const plan = await explain(stack.runtime.db, statement);
    plans.push({ sql: statement.sql, indexes: indexesIn(plan), nodes: nodeTypesIn(plan) });
  }
  return plans;
}

/** The plan of the list's own page query. */
async function pageQueryPlan(filters: JobFilters, startingAfter: string | null = null) {
  const plans = await plansOf((db) => listJobs(db, tenant, { limit: 25, startingAfter }, filters));
  const page = plans.find((p) => /order by workspace_id, id desc/.test(p.sql))!;
  expect(page).toBeDefined();
  return { page, all: plans };
}

const DEEP = 'job_00plan00015000';

describe.each<[string, JobFilters, string]>([
  ['no filter', {}, 'jobs_workspace_idx'],
  ['status', { status: 'failed' }, 'jobs_workspace_status_idx'],
  ['platform', { platform: 'twitter' }, 'jobs_workspace_platform_idx'],
  ['operation', { operation: 'followers' }, 'jobs_workspace_operation_idx'],
  ['schedule_id', { scheduleId: '<schedule>' }, 'jobs_schedule_idx'],
  ['batch_id', { batchId: '<batch>' }, 'jobs_batch_children_idx'],
])('GET /v1/jobs filtered by %s', (_name, given, index) => {
  const filters = (): JobFilters => ({
    ...given,
    ...(given.batchId ? { batchId } : {}),
    ...(given.scheduleId ? { scheduleId } : {}),
  });

  it(`reads ${index} for the first page and for a deep one, and never the whole table`, async () => {
    for (const startingAfter of [null, DEEP]) {
      const { page, all } = await pageQueryPlan(filters(), startingAfter);
      expect(page.indexes).toEqual([index]);
      expect(page.nodes).not.toContain('Seq Scan');
      // Ordered by the index itself; a batch (at most 100 children) is sorted in memory.
      if (index !== 'jobs_batch_children_idx') expect(page.nodes).not.toContain('Sort');
      // The check of starting_after is one index lookup.
      if (startingAfter) {
        const check = all.find((p) => p !== page)!;
        expect(check.indexes).toHaveLength(1);
        expect(check.nodes).not.toContain('Seq Scan');
      }
    }
  });
});

it.each<[string, JobFilters, string[]]>([
  [
    'platform and operation',
    { platform: 'twitter', operation: 'followers' },
    ['jobs_workspace_platform_idx', 'jobs_workspace_operation_idx'],
  ],
  [
    'status, platform and operation',
    { status: 'failed', platform: 'twitter', operation: 'followers' },
    ['jobs_workspace_status_idx', 'jobs_workspace_platform_idx', 'jobs_workspace_operation_idx'],
  ],
  // Filters that most jobs pass: the workspace's own order, checking the filter on each row, is as good.
  ['a status most jobs have', { status: 'completed' }, ['jobs_workspace_status_idx', 'jobs_workspace_idx']],
  [
    'a platform most jobs have',
    { platform: 'instagram', operation: 'profile' },
    ['jobs_workspace_platform_idx', 'jobs_workspace_operation_idx', 'jobs_workspace_idx'],
  ],
])('GET /v1/jobs filtered by %s reads one of their indexes, in order', async (_name, filters, indexes) => {
  for (const startingAfter of [null, DEEP]) {
    const { page } = await pageQueryPlan(filters, startingAfter);
    expect(page.indexes).toHaveLength(1);
    expect(indexes).toContain(page.indexes[0]);
    expect(page.nodes).not.toContain('Seq Scan');
    expect(page.nodes).not.toContain('Sort');
  }
});

it('GET /v1/batches and GET /v1/schedules read their workspace indexes, first page and deep', async () => {
  for (const startingAfter of [null, 'bat_00own00001500']) {
    const plans = await plansOf((db) => listBatchViews(db, tenant, { limit: 25, startingAfter }, { includeJobs: false }));
    const page = plans.find((p) => /from "batches"/.test(p.sql) && /order by workspace_id, id desc/.test(p.sql))!;
    expect(page.indexes).toEqual(['batches_workspace_idx']);
    expect(page.nodes).not.toContain('Sort');
  }
  for (const startingAfter of [null, 'sch_00own00001500']) {
    const plans = await plansOf((db) => listScheduleViews(db, tenant, { limit: 25, startingAfter }));
    const page = plans.find((p) => /from "schedules"/.test(p.sql) && /order by workspace_id, id desc/.test(p.sql))!;
    expect(page.indexes).toEqual(['schedules_workspace_idx']);
    expect(page.nodes).not.toContain('Sort');
  }
});

it('the retention purge finds expired results through jobs_retention_idx', async () => {
  // As of a time before every job finished: nothing is expired, the statements are recorded.
  const plans = await plansOf((db) => purgeExpiredResults({ db }, new Date('2000-01-01T00:00:00Z'), 30));
  const purge = plans.find((p) => /update jobs j set result_expired/.test(p.sql))!;
  expect(purge.indexes).toContain('jobs_retention_idx');
  expect(purge.nodes).not.toContain('Seq Scan');
});
