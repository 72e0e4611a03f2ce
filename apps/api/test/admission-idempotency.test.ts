import { startTestStack, type TestStack, countWorkspaceRows } from '@sdx/testing';

/**
 * Idempotency-Key on POST /v1/jobs through HTTP against real Postgres: one key yields exactly
 * one job and one reservation however many requests race, bodies are compared canonically, keys
 * are scoped per workspace, and a rejected request does not use the key up.
 */

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

const countRows = (table: 'jobs' | 'idempotency_keys' | 'credit_reservations', workspaceId: string) =>
  countWorkspaceRows(stack, table, workspaceId);

describe('Idempotency-Key', () => {
  it('turns 50 concurrent requests with one key into one job and one reservation', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const headers = { ...ws.auth, 'Idempotency-Key': 'concurrent-50' };
    const body = { platform: 'instagram', operation: 'posts', target: 'concurrency_check', limit: 10 };
    const responses = await Promise.all(Array.from({ length: 50 }, () => stack.api.post('/v1/jobs', { headers, body })));

    expect(responses.map((r) => r.status)).toEqual(Array(50).fill(202));
    const ids = new Set(responses.map((r) => r.body.id));
    expect(ids.size).toBe(1);
    const originals = responses.filter((r) => r.body.idempotent_replay === false);
    const replays = responses.filter((r) => r.body.idempotent_replay === true);
    expect(originals).toHaveLength(1);
    expect(replays).toHaveLength(49);
    for (const r of responses) expect(r.body.deduplicated).toBe(false);

    expect(await countRows('jobs', ws.workspaceId)).toBe(1);
    expect(await countRows('credit_reservations', ws.workspaceId)).toBe(1);
    expect(await countRows('idempotency_keys', ws.workspaceId)).toBe(1);
    const usage = await stack.api.get('/v1/usage/current', { headers: ws.auth });
    expect(usage.body).toMatchObject({ credits_reserved: 20, credits_used: 0, credits_remaining: 980 });
  });

  it('answers 409 idempotency_key_conflict when the key is reused with a different body', async () => {
    const ws = await stack.workspace();
    const headers = { ...ws.auth, 'Idempotency-Key': 'reuse-me' };
    const first = await stack.api.post('/v1/jobs', { headers, body: { operation: 'profile', target: 'firstbody' } });
    expect(first.status).toBe(202);
    const conflict = await stack.api.post('/v1/jobs', { headers, body: { operation: 'profile', target: 'secondbody' } });
    expect(conflict.status).toBe(409);
    expect(conflict.body.detail.error).toBe('idempotency_key_conflict');
    expect(await countRows('jobs', ws.workspaceId)).toBe(1);
    expect(await countRows('credit_reservations', ws.workspaceId)).toBe(1);
  });

  it('replays the same body sent with other key order and whitespace', async () => {
    const ws = await stack.workspace();
    const headers = { ...ws.auth, 'Idempotency-Key': 'canonical' };
    const first = await stack.api.post('/v1/jobs', {
      headers,
      raw: '{"platform":"instagram","operation":"posts","target":"canonicaluser","limit":5}',
    });
    expect(first.status).toBe(202);
    expect(first.body.idempotent_replay).toBe(false);
    const second = await stack.api.post('/v1/jobs', {
      headers,
      raw: '{\n  "limit" : 5,\n\t"target": "canonicaluser",   "operation":"posts",\n  "platform": "instagram"\n}\n',
    });
    expect(second.status).toBe(202);
    expect(second.body.id).toBe(first.body.id);
    expect(second.body.idempotent_replay).toBe(true);
    expect(await countRows('credit_reservations', ws.workspaceId)).toBe(1);
  });

  it('replays a job even after it left the active set, and keeps replaying', async () => {
    const ws = await stack.workspace();
    const headers = { ...ws.auth, 'Idempotency-Key': 'after-cancel' };
    const body = { operation: 'profile', target: 'cancelledone' };
    const first = await stack.api.post('/v1/jobs', { headers, body });
    expect(first.status).toBe(202);
    const cancelled = await stack.api.post(`/v1/jobs/${first.body.id}/cancel`, { headers: ws.auth });
    expect(cancelled.body.status).toBe('cancelled');
    for (let i = 0; i < 2; i++) {
      const again = await stack.api.post('/v1/jobs', { headers, body });
      expect(again.status).toBe(202);
      expect(again.body.id).toBe(first.body.id);
      expect(again.body.status).toBe('cancelled');
      expect(again.body.idempotent_replay).toBe(true);
    }
    expect(await countRows('jobs', ws.workspaceId)).toBe(1);
  });

  it('scopes keys to the workspace: the same key in two workspaces makes two jobs', async () => {
    const a = await stack.workspace();
    const b = await stack.workspace();
    const body = { operation: 'profile', target: 'sharedkey' };
    const [ra, rb] = await Promise.all([
      stack.api.post('/v1/jobs', { headers: { ...a.auth, 'Idempotency-Key': 'same-key' }, body }),
      stack.api.post('/v1/jobs', { headers: { ...b.auth, 'Idempotency-Key': 'same-key' }, body }),
    ]);
    expect(ra.status).toBe(202);
    expect(rb.status).toBe(202);
    expect(ra.body.id).not.toBe(rb.body.id);
    expect(ra.body.idempotent_replay).toBe(false);
    expect(rb.body.idempotent_replay).toBe(false);
    expect(await countRows('jobs', a.workspaceId)).toBe(1);
    expect(await countRows('jobs', b.workspaceId)).toBe(1);
    // Each workspace sees only its own job.
    expect((await stack.api.get(`/v1/jobs/${rb.body.id}`, { headers: a.auth })).status).toBe(404);
  });

  it('does not use the key up when the request is rejected for credits', async () => {
    const ws = await stack.workspace({ credits: 5 });
    const headers = { ...ws.auth, 'Idempotency-Key': 'needs-credits' };
    const body = { operation: 'posts', target: 'expensive', limit: 10 };
    const rejected = await stack.api.post('/v1/jobs', { headers, body });
    expect(rejected.status).toBe(402);
    expect(rejected.body.detail.error).toBe('insufficient_credits');
    expect(await countRows('idempotency_keys', ws.workspaceId)).toBe(0);

    await ws.grant(100);
    const accepted = await stack.api.post('/v1/jobs', { headers, body });
    expect(accepted.status).toBe(202);
    expect(accepted.body.idempotent_replay).toBe(false);
    expect(accepted.body.status).toBe('queued');
    const replay = await stack.api.post('/v1/jobs', { headers, body });
    expect(replay.body.id).toBe(accepted.body.id);
    expect(replay.body.idempotent_replay).toBe(true);
    expect(await countRows('credit_reservations', ws.workspaceId)).toBe(1);
  });

  it('does not use the key up when the request fails validation', async () => {
    const ws = await stack.workspace();
    const headers = { ...ws.auth, 'Idempotency-Key': 'invalid-first' };
    const invalid = await stack.api.post('/v1/jobs', { headers, body: { operation: 'profile', target: 'not a username!' } });
    expect(invalid.status).toBe(422);
    expect(await countRows('idempotency_keys', ws.workspaceId)).toBe(0);
    const valid = await stack.api.post('/v1/jobs', { headers, body: { operation: 'profile', target: 'validuser' } });
    expect(valid.status).toBe(202);
    expect(valid.body.idempotent_replay).toBe(false);
  });

  it('rejects a key longer than 128 characters with 422', async () => {
    const ws = await stack.workspace();
    const ok = await stack.api.post('/v1/jobs', {
      headers: { ...ws.auth, 'Idempotency-Key': 'k'.repeat(128) },
      body: { operation: 'profile', target: 'longkey' },
    });
    expect(ok.status).toBe(202);
    const tooLong = await stack.api.post('/v1/jobs', {
      headers: { ...ws.auth, 'Idempotency-Key': 'k'.repeat(129) },
      body: { operation: 'profile', target: 'longkey2' },
    });
    expect(tooLong.status).toBe(422);
    expect(await countRows('jobs', ws.workspaceId)).toBe(1);
  });
});
