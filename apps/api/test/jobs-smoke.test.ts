import { eventually, startTestStack, type TestStack } from '@sdx/testing';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ withWorker: true });
});
afterAll(async () => {
  await stack.close();
});

it('runs a job through the worker and bills it', async () => {
  const ws = await stack.workspace({ credits: 100 });
  const created = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'posts', target: 'natgeo', limit: 10 } });
  expect(created.status).toBe(202);
  expect(created.body.status).toBe('queued');
  const done = await eventually(async () => {
    const res = await stack.api.get(`/v1/jobs/${created.body.id}`, { headers: ws.auth });
    return res.body.status === 'completed' ? res : undefined;
  });
  expect(done.body.result_count).toBe(10);
  expect(done.body.billed_credits).toBe(20);
  const usage = await stack.api.get('/v1/usage/current', { headers: ws.auth });
  expect(usage.body).toMatchObject({ credits_used: 20, credits_reserved: 0, credits_remaining: 80 });
});

it('extracts synchronously', async () => {
  const ws = await stack.workspace({ credits: 100 });
  const res = await stack.api.post('/v1/extract', { headers: ws.auth, body: { operation: 'profile', target: 'natgeo' } });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ status: 'completed', billed_credits: 1, result_count: 1 });
});
