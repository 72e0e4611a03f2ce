import { startTestStack, type TestStack } from '@sdx/testing';

/** A Facebook post URL whose IDs are not digits (or pfbid…) is refused at admission: 422 invalid_target, nothing charged or queued. */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

it('refuses a Facebook post URL with a bad ID with 422 invalid_target, and admits a good one', async () => {
  const ws = await stack.workspace({ credits: 1000 });
  for (const [operation, target] of [
    ['post', 'https://www.facebook.com/nasa/posts/me%3Ffields%3Daccess_token'],
    ['post', 'https://www.facebook.com/permalink.php?story_fbid=1&id=..%2Fme'],
    ['comments', 'https://www.facebook.com/story.php?story_fbid=abc&id=123'],
  ]) {
    const res = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { platform: 'facebook', operation, target } });
    expect([target, res.status, res.body.detail.error]).toEqual([target, 422, 'invalid_target']);
    expect(res.body.detail.message).toMatch(/not a valid ID/);
  }
  expect(await stack.runtime.db.selectFrom('jobs').select('id').where('workspace_id', '=', ws.workspaceId).execute()).toEqual([]);
  const good = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'facebook', operation: 'post', target: 'https://www.facebook.com/nasa/posts/1234567890123456' },
  });
  expect(good.status).toBe(202);
});
