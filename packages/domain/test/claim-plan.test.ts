import { sql } from 'kysely';
import { claimJobs, claimStatement } from '@sdx/domain/testing';
import { indexesIn, startTestStack, type TestStack } from '@sdx/testing';

/**
 * A claim costs a few primary-key lookups however many jobs are queued. The claimable test
 * implies the predicates of the partial status indexes, and with fresh or stale statistics
 * those indexes look tiny: a claim that tested status in a WHERE clause was planned as a
 * bitmap scan of every active job. The claim must read only the rows it was given.
 */

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

/** Copies a queued job of the workspace `count` times, as a backlog would leave them. */
async function backlog(templateId: string, count: number): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    insert into jobs (id, workspace_id, platform, operation, target, normalized_target, request_key, requested_limit,
                      status, max_attempts, credit_rate, results_per_credit, base_credits, reserved_credits)
    select ${templateId} || '_' || n, workspace_id, platform, operation, target || n, normalized_target || n, request_key || n,
           requested_limit, 'queued', max_attempts, credit_rate, results_per_credit, base_credits, 0
    from jobs, generate_series(1, ${count}) as n
    where id = ${templateId}
    returning id
  `.execute(stack.runtime.db);
  return rows.map((r) => r.id);
}

it('claims by primary key while thousands of jobs are queued, and claims only those given', async () => {
  const ws = await stack.workspace({ credits: 1_000 });
  const res = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'instagram', operation: 'profile', target: 'planner_template' },
  });
  expect(res.status).toBe(202);
  const queued = await backlog(res.body.id, 3_000);
  const wanted = queued.slice(100, 106);

  const compiled = claimStatement(stack.runtime.services, wanted).compile(stack.runtime.db);
  const plan = await stack.runtime.db.transaction().execute(async (tx) => {
    const { rows } = await tx.executeQuery<{ 'QUERY PLAN': unknown }>({ ...compiled, sql: `explain (format json) ${compiled.sql}` });
    return rows[0]['QUERY PLAN'];
  });
  const indexes = indexesIn(plan);
  expect(indexes.length).toBeGreaterThan(0);
  expect(new Set(indexes)).toEqual(new Set(['jobs_pkey']));

  const claimed = await claimJobs(stack.runtime.services, wanted);
  expect(claimed.map((row) => (row && !(row instanceof Error) ? row.id : null))).toEqual(wanted);
  const running = await stack.runtime.db
    .selectFrom('jobs')
    .select('id')
    .where('workspace_id', '=', ws.workspaceId)
    .where('status', '=', 'running')
    .execute();
  expect(running.map((r) => r.id).sort()).toEqual([...wanted].sort());
});
