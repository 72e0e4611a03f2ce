import pg from 'pg';
import { countWorkspaceRows, startTestStack, type TestStack } from '@sdx/testing';

/**
 * Overload sheds load instead of hanging: when the admission writer is stalled (here, a lock
 * held on the workspace's balance row), submissions queued behind it are answered 503
 * service_unavailable with Retry-After once they have waited 5 s, and write nothing; the one
 * being written completes when the lock goes, and the service admits again.
 */

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

it('answers 503 to submissions stuck behind a stalled admission, then recovers', async () => {
  const ws = await stack.workspace({ credits: 100 });
  const blocker = new pg.Client({ connectionString: stack.databaseUrl });
  await blocker.connect();
  await blocker.query('begin');
  await blocker.query('select 1 from credit_balances where workspace_id = $1 for update', [ws.workspaceId]);
  const post = (target: string) => stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target } });
  try {
    // The first submission's group waits on the lock; the others queue behind it.
    const stalled = post('overload_first');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = Date.now();
    const queued = await Promise.all([post('overload_a'), post('overload_b'), post('overload_c')]);
    const waited = Date.now() - started;
    for (const res of queued) {
      expect(res.status).toBe(503);
      expect(res.body.detail.error).toBe('service_unavailable');
      expect(res.headers['retry-after']).toBe('1');
    }
    expect(waited).toBeGreaterThanOrEqual(4_500);
    expect(waited).toBeLessThan(9_000);
    await blocker.query('commit');
    expect((await stalled).status).toBe(202);
  } finally {
    await blocker.end().catch(() => undefined);
  }
  // Only the first submission was written; the service admits again at once.
  expect(await countWorkspaceRows(stack, 'jobs', ws.workspaceId)).toBe(1);
  expect((await post('overload_after')).status).toBe(202);
}, 30_000);
