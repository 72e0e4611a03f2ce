import { sql } from 'kysely';
import { indexesIn, startTestStack, type TestStack } from '@sdx/testing';

/**
 * Batch children are found through a partial index that single jobs never enter (migration
 * 0004): every lookup by batch, with one ID or a list, literal or as a parameter, must still
 * read it, however many single jobs the workspace has.
 */

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

it('keeps single jobs out of the batch index and finds batch children through it', async () => {
  const db = stack.runtime.db;
  const ws = await stack.workspace({ credits: 10_000, maxActiveJobs: 10_000 });
  const batch = await stack.api.post('/v1/batches', {
    headers: ws.auth,
    body: { platform: 'instagram', operation: 'profile', targets: ['batch_index_a', 'batch_index_b', 'batch_index_c'] },
  });
  expect(batch.status).toBe(202);
  const single = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'instagram', operation: 'profile', target: 'batch_index_single' },
  });
  expect(single.status).toBe(202);
  // Thousands of single jobs in the same workspace, as a busy workspace has.
  await sql`
    insert into jobs (id, workspace_id, platform, operation, target, normalized_target, request_key, requested_limit,
                      status, max_attempts, credit_rate, results_per_credit, base_credits, reserved_credits)
    select id || '_' || n, workspace_id, platform, operation, target || n, normalized_target || n, request_key || n,
           requested_limit, 'completed', max_attempts, credit_rate, results_per_credit, base_credits, 0
    from jobs, generate_series(1, 3000) as n
    where id = ${single.body.id}
  `.execute(db);
  await sql`analyze jobs`.execute(db);

  const definition = await sql<{ def: string }>`select pg_get_indexdef('jobs_batch_children_idx'::regclass) as def`.execute(db);
  expect(definition.rows[0].def).toMatch(/WHERE \(batch_id IS NOT NULL\)/);
  const old = await sql<{ n: number }>`select count(*)::int as n from pg_indexes where indexname = 'jobs_batch_idx'`.execute(db);
  expect(old.rows[0].n).toBe(0);

  const explain = async (text: string, parameters: unknown[]) => {
    const { rows } = await db.executeQuery<{ 'QUERY PLAN': unknown }>({
      sql: `explain (format json) ${text}`,
      parameters,
      query: undefined as never,
      queryId: undefined as never,
    });
    return indexesIn(rows[0]['QUERY PLAN']);
  };
  const byOne = await explain('select * from jobs where workspace_id = $1 and batch_id = $2 and status = $3 order by batch_position', [
    ws.workspaceId,
    batch.body.id,
    'completed',
  ]);
  const byList = await explain(
    'select id, target from jobs where workspace_id = $1 and batch_id = any($2::text[]) order by batch_id, batch_position',
    [ws.workspaceId, [batch.body.id, 'bat_other']],
  );
  expect(byOne).toEqual(['jobs_batch_children_idx']);
  expect(byList).toEqual(['jobs_batch_children_idx']);

  // And the batch reads its children, in target order.
  const read = await stack.api.get(`/v1/batches/${batch.body.id}`, { headers: ws.auth });
  expect(read.status).toBe(200);
  expect(read.body.jobs.map((j: { target: string }) => j.target)).toEqual(['batch_index_a', 'batch_index_b', 'batch_index_c']);
});
