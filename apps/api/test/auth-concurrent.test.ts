import { createApiKey, revokeApiKey } from '@sdx/domain/testing';
import { startTestStack, type TestStack } from '@sdx/testing';

/**
 * API key lookups that arrive together share one query. Each request must still be answered
 * for its own key, and a revocation must hold for the very next request, however many arrive
 * at once.
 */

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

describe('authentication under concurrent requests', () => {
  it('answers each of many simultaneous requests for its own key', async () => {
    const a = await stack.workspace();
    const b = await stack.workspace();
    const revoked = await createApiKey(stack.runtime.db, a.workspaceId, 'to revoke');
    await revokeApiKey(stack.runtime.db, revoked.key_id);
    const callers = [
      { headers: a.auth, status: 200, workspace: a.workspaceId },
      { headers: b.auth, status: 200, workspace: b.workspaceId },
      { headers: { Authorization: `Bearer ${b.apiKey}` }, status: 200, workspace: b.workspaceId },
      { headers: { 'X-API-Key': revoked.api_key }, status: 401, error: 'invalid_api_key' },
      { headers: { 'X-API-Key': 'sdx_live_doesnotexist0000000000000000000000' }, status: 401, error: 'invalid_api_key' },
    ];
    const plan = Array.from({ length: 60 }, (_, i) => callers[i % callers.length]);
    const responses = await Promise.all(plan.map((c) => stack.api.get('/v1/account', { headers: c.headers })));
    responses.forEach((res, i) => {
      const expected = plan[i];
      expect(res.status).toBe(expected.status);
      if (expected.status === 200) expect(res.body.organization_id).toBe(expected.workspace);
      else expect(res.body.detail.error).toBe(expected.error);
    });
  });

  it('refuses a key on the first request after its revocation, even in a burst', async () => {
    const ws = await stack.workspace();
    const before = await Promise.all(Array.from({ length: 20 }, () => stack.api.get('/v1/account', { headers: ws.auth })));
    expect(before.every((r) => r.status === 200)).toBe(true);
    await revokeApiKey(stack.runtime.db, ws.keyId);
    const after = await Promise.all(Array.from({ length: 20 }, () => stack.api.get('/v1/account', { headers: ws.auth })));
    expect(after.map((r) => r.status)).toEqual(Array(20).fill(401));
  });
});
