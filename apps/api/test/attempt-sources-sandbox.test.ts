import { eventually, startTestStack, type TestStack } from '@sdx/testing';

/** The sandbox (the default provider) records no attempt sources and reads no source health. */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ withWorker: true });
});
afterAll(() => stack.close());

it('a sandbox job writes no attempt sources, shows none, and GET /v1/platforms lists no sources', async () => {
  const ws = await stack.workspace({ credits: 1000 });
  const created = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'instagram', operation: 'profile', target: 'sandboxsources' },
  });
  expect(created.status).toBe(202);
  const done = await eventually(async () => {
    const res = await stack.api.get(`/v1/jobs/${created.body.id}`, { headers: ws.auth });
    return res.body.status === 'completed' ? res : undefined;
  });
  expect(done.body).not.toHaveProperty('attempt_sources');
  expect(done.body.result[0].source).toBe('sandbox');
  const rows = await stack.runtime.services.db
    .selectFrom('job_attempt_sources')
    .select('job_id')
    .where('job_id', '=', created.body.id)
    .execute();
  expect(rows).toEqual([]);
  const platforms = await stack.api.get('/v1/platforms');
  expect(platforms.body.every((p: Record<string, unknown>) => Array.isArray(p.sources) && p.sources.length === 0)).toBe(true);
  expect(stack.runtime.registry.hasLiveSources()).toBe(false);
});
