import { signUpUser, startTestStack, type TestStack } from '@sdx/testing';

/**
 * GET /v1/invitations/preview: what an invitation's page says before it is accepted (the
 * workspace and who sent it), for the holder of the token only, and 410 as accept answers.
 */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ env: { EMAIL_VERIFICATION: '0' } });
});
afterAll(async () => {
  await stack.close();
});

describe('GET /v1/invitations/preview', () => {
  it('names the workspace, the role and the inviter without credentials, changes nothing, and is 410 once used, revoked or unknown', async () => {
    const owner = await signUpUser(stack, { displayName: 'Olive Owner' });
    const team = await stack.api.post('/v1/workspaces', { headers: owner.write(), body: { name: 'Acme research' } });
    const invited = await stack.api.post(`/v1/workspaces/${team.body.id}/invitations`, {
      headers: owner.write(),
      body: { email: 'grace@example.com', role: 'admin' },
    });
    expect(invited.status).toBe(201);

    const preview = await stack.api.get(`/v1/invitations/preview?token=${encodeURIComponent(invited.body.token)}`);
    expect(preview.status).toBe(200);
    expect(preview.body).toEqual({
      workspace: { id: team.body.id, name: 'Acme research' },
      role: 'admin',
      expires_at: invited.body.expires_at,
      invited_by: { display_name: 'Olive Owner', email: owner.email },
    });
    // Read twice, still pending: the preview changes nothing.
    expect((await stack.api.get(`/v1/invitations/preview?token=${encodeURIComponent(invited.body.token)}`)).status).toBe(200);
    expect((await stack.api.get(`/v1/workspaces/${team.body.id}/invitations`, { headers: owner.read(team.body.id) })).body).toHaveLength(1);

    const grace = await signUpUser(stack, { email: 'grace@example.com' });
    expect((await stack.api.post('/v1/invitations/accept', { headers: grace.write(), body: { token: invited.body.token } })).status).toBe(
      200,
    );
    const used = await stack.api.get(`/v1/invitations/preview?token=${encodeURIComponent(invited.body.token)}`);
    expect([used.status, used.body.detail.error]).toEqual([410, 'invitation_invalid']);

    const revoked = await stack.api.post(`/v1/workspaces/${team.body.id}/invitations`, {
      headers: owner.write(),
      body: { email: 'hal@example.com', role: 'viewer' },
    });
    expect(
      (await stack.api.delete(`/v1/workspaces/${team.body.id}/invitations/${revoked.body.id}`, { headers: owner.write(team.body.id) }))
        .status,
    ).toBe(204);
    const gone = await stack.api.get(`/v1/invitations/preview?token=${encodeURIComponent(revoked.body.token)}`);
    expect([gone.status, gone.body.detail.error]).toEqual([410, 'invitation_invalid']);

    const unknown = await stack.api.get('/v1/invitations/preview?token=not-a-token');
    expect([unknown.status, unknown.body.detail.error]).toEqual([410, 'invitation_invalid']);
    const missing = await stack.api.get('/v1/invitations/preview');
    expect(missing.status).toBe(422);
  });

  it('names no inviter once that user is gone', async () => {
    const owner = await signUpUser(stack);
    const team = await stack.api.post('/v1/workspaces', { headers: owner.write(), body: { name: 'Orphans' } });
    const invited = await stack.api.post(`/v1/workspaces/${team.body.id}/invitations`, {
      headers: owner.write(),
      body: { email: 'ivy@example.com', role: 'member' },
    });
    await stack.runtime.db.updateTable('invitations').set({ invited_by: null }).where('id', '=', invited.body.id).execute();
    const preview = await stack.api.get(`/v1/invitations/preview?token=${encodeURIComponent(invited.body.token)}`);
    expect(preview.body).toMatchObject({ workspace: { name: 'Orphans' }, role: 'member', invited_by: null });
  });
});
