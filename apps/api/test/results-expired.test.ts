import { purgeExpiredResults } from '@sdx/domain/testing';
import { eventually, type SeededWorkspace, startTestStack, type TestStack } from '@sdx/testing';

/**
 * What a client sees once the retention purge has expired a result (extensions.md 9): the job
 * stays, with `result` null and `result_expired` true and its settlement unchanged; its exports
 * and items answer 410 results_expired; a batch with such a child cannot be exported whole; and
 * the result cache no longer serves it.
 */

let stack: TestStack;
let ws: SeededWorkspace;
let jobId: string;
let batchId: string;
let before: Record<string, unknown>;

beforeAll(async () => {
  stack = await startTestStack({ withWorker: true });
  ws = await stack.workspace({ credits: 1_000, rateLimitPerMinute: 100_000 });
  jobId = (
    await stack.api.post('/v1/jobs', {
      headers: ws.auth,
      body: { platform: 'twitter', operation: 'followers', target: 'expiring', limit: 5 },
    })
  ).body.id;
  batchId = (
    await stack.api.post('/v1/batches', {
      headers: ws.auth,
      body: { platform: 'instagram', operation: 'profile', targets: ['expiring_a', 'expiring_b'] },
    })
  ).body.id;
  await eventually(async () => {
    const rows = await stack.runtime.db.selectFrom('jobs').select('status').where('workspace_id', '=', ws.workspaceId).execute();
    return rows.length === 3 && rows.every((r) => r.status === 'completed');
  }, 60_000);
  before = (await stack.api.get(`/v1/jobs/${jobId}`, { headers: ws.auth })).body;
  expect(before).toMatchObject({ status: 'completed', result_count: 5, result_expired: false });
  // Thirty-one days on, the purge expires every result of the workspace.
  const later = new Date(Date.now() + 31 * 86_400_000);
  expect(await purgeExpiredResults(stack.runtime.services, later, 30)).toEqual({ jobs: 3, pages: 3 });
}, 90_000);
afterAll(async () => {
  await stack.close();
});

it('keeps the job with result null and result_expired true, everything else as it was', async () => {
  const after = await stack.api.get(`/v1/jobs/${jobId}`, { headers: ws.auth });
  expect(after.status).toBe(200);
  expect(after.body).toEqual({ ...before, result: null, result_expired: true });
  const listed = await stack.api.get('/v1/jobs', { headers: ws.auth, query: { status: 'completed', platform: 'twitter' } });
  expect(listed.body).toEqual([{ ...before, result: null, result_expired: true }]);
});

it('answers 410 results_expired for its exports and its items', async () => {
  for (const format of ['json', 'ndjson', 'csv', 'xlsx']) {
    const res = await stack.api.get(`/v1/jobs/${jobId}/export`, { headers: ws.auth, query: { format } });
    expect(res.status).toBe(410);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.detail).toEqual({
      error: 'results_expired',
      message: `The result of job ${jobId} was deleted after the retention period.`,
      job_id: jobId,
    });
  }
  const items = await stack.api.get(`/v1/jobs/${jobId}/items`, { headers: ws.auth });
  expect(items.status).toBe(410);
  expect(items.body.detail).toMatchObject({ error: 'results_expired', job_id: jobId });
});

it('answers 410 for the export of a batch whose completed children expired', async () => {
  const res = await stack.api.get(`/v1/batches/${batchId}/export`, { headers: ws.auth, query: { format: 'csv' } });
  expect(res.status).toBe(410);
  expect(res.body.detail).toMatchObject({ error: 'results_expired', batch_id: batchId });
  expect(res.body.detail.job_ids).toHaveLength(2);
});

it('no longer serves an expired result from the cache', async () => {
  const again = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'twitter', operation: 'followers', target: 'expiring', limit: 5 },
  });
  expect(again.status).toBe(202);
  expect(again.body).toMatchObject({ cached: false, status: 'queued', result_expired: false });
});
