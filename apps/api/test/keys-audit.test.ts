import { sql } from 'kysely';
import { createApiKey } from '@sdx/domain/testing';
import { eventually, signUpUser, startTestStack, type SessionUser, type TestStack } from '@sdx/testing';

/** extensions.md 3 and 4: API keys through the API, rotation as api-v1.md 5.5 says, and audit events. */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

async function teamWith(owner: SessionUser, role: string): Promise<{ workspaceId: string; caller: SessionUser }> {
  const workspaceId = (await stack.api.post('/v1/workspaces', { headers: owner.write(), body: { name: 'Keys team' } })).body.id as string;
  if (role === 'owner') return { workspaceId, caller: owner };
  const caller = await signUpUser(stack);
  const invited = await stack.api.post(`/v1/workspaces/${workspaceId}/invitations`, {
    headers: owner.write(),
    body: { email: caller.email, role },
  });
  await stack.api.post('/v1/invitations/accept', { headers: caller.write(), body: { token: invited.body.token } });
  return { workspaceId, caller };
}

describe('API keys', () => {
  it('create shows the secret once; the key works; list is newest first without secrets', async () => {
    const owner = await signUpUser(stack);
    const { workspaceId, caller: admin } = await teamWith(owner, 'admin');
    const res = await stack.api.post('/v1/keys', { headers: admin.write(workspaceId), body: { name: 'CI' } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^key_/),
      name: 'CI',
      prefix: res.body.api_key.slice(0, 12),
      role: 'member',
      kind: 'api_key',
      created_at: expect.any(String),
      expires_at: null,
      last_used_at: null,
      revoked_at: null,
      created_by: admin.userId,
      monthly_credit_cap: null,
      month_spent_credits: 0,
      api_key: expect.stringMatching(/^sdx_live_[0-9A-Za-z]{32,}$/),
    });
    const account = await stack.api.get('/v1/account', { headers: { 'X-API-Key': res.body.api_key } });
    expect(account.body).toMatchObject({
      organization_id: workspaceId,
      authenticated_key_id: res.body.id,
      role: 'member',
      auth_type: 'api_key',
      user: null,
    });

    const second = await stack.api.post('/v1/keys', {
      headers: admin.write(workspaceId),
      body: { name: 'viewer key', role: 'viewer', expires_at: '2099-01-01T00:00:00Z' },
    });
    expect(second.body).toMatchObject({ role: 'viewer', expires_at: '2099-01-01T00:00:00.000Z' });
    await stack.api.delete(`/v1/keys/${res.body.id}`, { headers: admin.write(workspaceId) });
    const list = await stack.api.get('/v1/keys', { headers: { 'X-API-Key': second.body.api_key } });
    expect(list.status).toBe(200);
    expect(list.body.map((k: { id: string }) => k.id)).toEqual([second.body.id, res.body.id]);
    expect(list.body[1]).toMatchObject({ id: res.body.id, revoked_at: expect.any(String) });
    expect(JSON.stringify(list.body)).not.toContain(res.body.api_key);
    expect(JSON.stringify(list.body)).not.toContain(second.body.api_key);
    for (const key of list.body)
      expect(Object.keys(key).sort()).toEqual([
        'created_at',
        'created_by',
        'expires_at',
        'id',
        'kind',
        'last_used_at',
        'month_spent_credits',
        'monthly_credit_cap',
        'name',
        'prefix',
        'revoked_at',
        'role',
      ]);
  });

  it("refuses a role above the caller's and an expiry in the past", async () => {
    const owner = await signUpUser(stack);
    const { workspaceId, caller: admin } = await teamWith(owner, 'admin');
    const above = await stack.api.post('/v1/keys', { headers: admin.write(workspaceId), body: { name: 'too much', role: 'owner' } });
    expect(above.status).toBe(403);
    expect(above.body.detail).toMatchObject({ error: 'forbidden', required_role: 'owner' });
    const adminKey = await stack.api.post('/v1/keys', { headers: admin.write(workspaceId), body: { name: 'admin', role: 'admin' } });
    expect(adminKey.status).toBe(201);
    const byKey = await stack.api.post('/v1/keys', {
      headers: { 'X-API-Key': adminKey.body.api_key },
      body: { name: 'from key', role: 'owner' },
    });
    expect(byKey.body.detail).toMatchObject({ error: 'forbidden', required_role: 'owner' });
    const fromKey = await stack.api.post('/v1/keys', {
      headers: { 'X-API-Key': adminKey.body.api_key },
      body: { name: 'from key', role: 'admin' },
    });
    expect(fromKey.body.created_by).toBe(adminKey.body.id);
    const past = await stack.api.post('/v1/keys', {
      headers: admin.write(workspaceId),
      body: { name: 'past', expires_at: '2020-01-01T00:00:00Z' },
    });
    expect(past.status).toBe(422);
    expect(past.body.detail[0].loc).toEqual(['body', 'expires_at']);
    const ownerKey = await stack.api.post('/v1/keys', { headers: owner.write(workspaceId), body: { name: 'owner', role: 'owner' } });
    expect(ownerKey.body.role).toBe('owner');
  });

  it('an expired key is 401 invalid_api_key', async () => {
    const owner = await signUpUser(stack);
    const created = await stack.api.post('/v1/keys', {
      headers: owner.write(),
      body: { name: 'short-lived', expires_at: new Date(Date.now() + 1500).toISOString() },
    });
    const key = { 'X-API-Key': created.body.api_key };
    expect((await stack.api.get('/v1/account', { headers: key })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1600));
    const res = await stack.api.get('/v1/account', { headers: key });
    expect([res.status, res.body.detail.error]).toEqual([401, 'invalid_api_key']);
  });

  it('revocation is immediate; unknown or foreign keys are 404 key_not_found', async () => {
    const owner = await signUpUser(stack);
    const other = await signUpUser(stack);
    const created = await stack.api.post('/v1/keys', { headers: owner.write(), body: { name: 'to revoke' } });
    const foreign = await stack.api.delete(`/v1/keys/${created.body.id}`, { headers: other.write() });
    expect([foreign.status, foreign.body.detail.error]).toEqual([404, 'key_not_found']);
    const unknown = await stack.api.delete('/v1/keys/key_nosuch', { headers: owner.write() });
    expect([unknown.status, unknown.body.detail.error]).toEqual([404, 'key_not_found']);
    expect((await stack.api.get('/v1/account', { headers: { 'X-API-Key': created.body.api_key } })).status).toBe(200);
    expect((await stack.api.delete(`/v1/keys/${created.body.id}`, { headers: owner.write() })).status).toBe(204);
    const after = await stack.api.get('/v1/account', { headers: { 'X-API-Key': created.body.api_key } });
    expect([after.status, after.body.detail.error]).toEqual([401, 'invalid_api_key']);
    expect((await stack.api.delete(`/v1/keys/${created.body.id}`, { headers: owner.write() })).status).toBe(204);
  });

  it('records last_used_at, at most once a minute per key', async () => {
    const owner = await signUpUser(stack);
    const created = await stack.api.post('/v1/keys', { headers: owner.write(), body: { name: 'used' } });
    const key = { 'X-API-Key': created.body.api_key };
    await stack.api.get('/v1/account', { headers: key });
    const first = await eventually(
      async () =>
        (await stack.api.get('/v1/keys', { headers: owner.read() })).body.find((k: { id: string }) => k.id === created.body.id)
          ?.last_used_at,
    );
    expect(Math.abs(Date.parse(first) - Date.now())).toBeLessThan(10_000);
    await stack.api.get('/v1/account', { headers: key });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const listed = (await stack.api.get('/v1/keys', { headers: owner.read() })).body.find((k: { id: string }) => k.id === created.body.id);
    expect(listed.last_used_at).toBe(first);
  });

  it('rotates as api-v1.md 5.5 says: create a replacement, confirm it with GET /v1/account, revoke the old key', async () => {
    const ws = await stack.workspace();
    const old = ws.auth;
    const replacement = await stack.api.post('/v1/keys', { headers: old, body: { name: 'replacement', role: 'owner' } });
    expect(replacement.status).toBe(201);
    expect(replacement.body.created_by).toBe(ws.keyId);
    const fresh = { 'X-API-Key': replacement.body.api_key };
    const confirmed = await stack.api.get('/v1/account', { headers: fresh });
    expect(confirmed.body).toMatchObject({ organization_id: ws.workspaceId, authenticated_key_id: replacement.body.id, role: 'owner' });
    expect((await stack.api.delete(`/v1/keys/${ws.keyId}`, { headers: fresh })).status).toBe(204);
    expect((await stack.api.get('/v1/account', { headers: old })).status).toBe(401);
    expect((await stack.api.get('/v1/account', { headers: fresh })).status).toBe(200);
    expect((await stack.api.post('/v1/jobs', { headers: fresh, body: { operation: 'profile', target: 'nasa' } })).status).toBe(202);
    const listed = (await stack.api.get('/v1/keys', { headers: fresh })).body;
    expect(listed.map((k: { id: string; revoked_at: string | null }) => [k.id, k.revoked_at !== null])).toEqual([
      [replacement.body.id, false],
      [ws.keyId, true],
    ]);
  });
});

describe('audit events', () => {
  it('records each change with its actor, newest first, paged with starting_after', async () => {
    const owner = await signUpUser(stack);
    const workspaceId = (await stack.api.post('/v1/workspaces', { headers: owner.write(), body: { name: 'Audited' } })).body.id as string;
    const h = owner.write(workspaceId);
    await stack.api.patch(`/v1/workspaces/${workspaceId}`, { headers: h, body: { name: 'Audited 2' } });
    const key = await stack.api.post('/v1/keys', { headers: h, body: { name: 'k', role: 'admin' } });
    const keyAuth = { 'X-API-Key': key.body.api_key };
    const invited = await stack.api.post(`/v1/workspaces/${workspaceId}/invitations`, {
      headers: keyAuth,
      body: { email: 'joiner@example.com', role: 'viewer' },
    });
    const joiner = await signUpUser(stack, { email: 'joiner@example.com' });
    await stack.api.post('/v1/invitations/accept', { headers: joiner.write(), body: { token: invited.body.token } });
    await stack.api.patch(`/v1/workspaces/${workspaceId}/members/${joiner.userId}`, { headers: keyAuth, body: { role: 'member' } });
    await stack.api.delete(`/v1/workspaces/${workspaceId}/members/${joiner.userId}`, { headers: h });
    await stack.api.delete(`/v1/keys/${key.body.id}`, { headers: h });

    const res = await stack.api.get('/v1/audit-events', { headers: owner.read(workspaceId) });
    expect(res.status).toBe(200);
    expect(res.body.map((e: { action: string; actor: { type: string; id: string } }) => [e.action, e.actor.type, e.actor.id])).toEqual([
      ['api_key.revoked', 'user', owner.userId],
      ['member.removed', 'user', owner.userId],
      ['member.role_changed', 'api_key', key.body.id],
      ['member.joined', 'user', joiner.userId],
      ['member.invited', 'api_key', key.body.id],
      ['api_key.created', 'user', owner.userId],
      ['workspace.renamed', 'user', owner.userId],
      ['workspace.created', 'user', owner.userId],
    ]);
    expect(res.body[2]).toMatchObject({
      target_type: 'user',
      target_id: joiner.userId,
      data: { from: 'viewer', to: 'member' },
      ip: expect.any(String),
      created_at: expect.any(String),
    });
    const page1 = await stack.api.get('/v1/audit-events', { headers: owner.read(workspaceId), query: { limit: 3 } });
    const page2 = await stack.api.get('/v1/audit-events', {
      headers: owner.read(workspaceId),
      query: { limit: 3, starting_after: page1.body[2].id },
    });
    expect([...page1.body, ...page2.body].map((e: { id: string }) => e.id)).toEqual(res.body.slice(0, 6).map((e: { id: string }) => e.id));
    expect((await stack.api.get('/v1/audit-events', { headers: owner.read(workspaceId), query: { limit: 0 } })).status).toBe(422);

    // Sign-up is recorded in the personal workspace.
    const personal = await stack.api.get('/v1/audit-events', { headers: joiner.read() });
    expect(personal.body.map((e: { action: string }) => e.action)).toEqual(['user.signed_up']);
  });

  it('are written in the transaction of their change: a refused or failed change records nothing', async () => {
    const owner = await signUpUser(stack);
    const before = await stack.runtime.db
      .selectFrom('audit_events')
      .select('id')
      .where('workspace_id', '=', owner.personalWorkspaceId)
      .execute();
    await stack.api.patch(`/v1/workspaces/${owner.personalWorkspaceId}/members/${owner.userId}`, {
      headers: owner.write(),
      body: { role: 'admin' },
    });
    await stack.api.post(`/v1/workspaces/${owner.personalWorkspaceId}/invitations`, {
      headers: owner.write(),
      body: { email: 'x@example.com', role: 'member' },
    });
    // An audit event that cannot be written rolls its change back: a key whose event fails is not created.
    await sql`alter table audit_events add constraint audit_test_refuses_keys check (action <> 'api_key.created') not valid`.execute(
      stack.runtime.db,
    );
    try {
      await expect(createApiKey(stack.runtime.db, owner.personalWorkspaceId, 'doomed', { role: 'member' })).rejects.toThrow(
        /audit_test_refuses_keys/,
      );
    } finally {
      await sql`alter table audit_events drop constraint audit_test_refuses_keys`.execute(stack.runtime.db);
    }
    expect(await stack.runtime.db.selectFrom('api_keys').select('id').where('name', '=', 'doomed').execute()).toEqual([]);
    const after = await stack.runtime.db
      .selectFrom('audit_events')
      .select('id')
      .where('workspace_id', '=', owner.personalWorkspaceId)
      .execute();
    expect(after).toEqual(before);
  });
});
