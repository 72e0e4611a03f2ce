import { startTestStack, type TestStack, waitForJob } from '@sdx/testing';

/** extensions.md 7: 202 answers name the new resource in Location; a job shows what it holds in reserve. */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ withWorker: true });
});
afterAll(async () => {
  await stack.close();
});

describe('Location and reserved_credits', () => {
  it("answers POST /v1/jobs with the job's Location and its reservation, 0 once it has ended", async () => {
    const ws = await stack.workspace();
    const res = await stack.api.post('/v1/jobs', {
      headers: ws.auth,
      body: { platform: 'twitter', operation: 'followers', target: 'sandbox_slow_300_location', limit: 100 },
    });
    expect(res.status).toBe(202);
    expect(res.headers.location).toBe(`/v1/jobs/${res.body.id}`);
    expect(res.body.reserved_credits).toBe(200);
    const followed = await stack.api.get(res.headers.location, { headers: ws.auth });
    expect(followed.body.id).toBe(res.body.id);
    const done = await waitForJob(stack, ws.auth, res.body.id, (j) => j.status === 'completed');
    expect(done.reserved_credits).toBe(0);
    expect(done.billed_credits).toBe(200);
  });

  it("answers POST /v1/batches with the batch's Location", async () => {
    const ws = await stack.workspace();
    const res = await stack.api.post('/v1/batches', {
      headers: ws.auth,
      body: { operation: 'profile', targets: ['sandbox_slow_300_a', 'sandbox_slow_300_b'] },
    });
    expect(res.status).toBe(202);
    expect(res.headers.location).toBe(`/v1/batches/${res.body.id}`);
    expect(res.body.reserved_credits).toBe(2);
    expect((await stack.api.get(res.headers.location, { headers: ws.auth })).body.id).toBe(res.body.id);
  });
});
