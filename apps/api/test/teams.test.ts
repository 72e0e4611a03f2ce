import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { eventually, grantWorkspaceCredits, signUpUser, startTestStack, type SessionUser, type TestStack, waitForJob } from '@sdx/testing';

/** extensions.md 2: workspaces, members, invitations and the four roles, over HTTP. */

/** A loopback SMTP receiver: enough of RFC 5321 for nodemailer to hand over a message. */
async function fakeSmtp(): Promise<{ url: string; messages: string[]; close(): Promise<void> }> {
  const messages: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let data: string | null = null;
    let buffer = '';
    socket.write('220 fake ESMTP\r\n');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      let at: number;
      while ((at = buffer.indexOf('\r\n')) >= 0) {
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        if (data !== null) {
          if (line === '.') {
            messages.push(data);
            data = null;
            socket.write('250 OK\r\n');
          } else data += `${line}\n`;
          continue;
        }
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') socket.write('250 fake\r\n');
        else if (verb === 'DATA') {
          data = '';
          socket.write('354 go on\r\n');
        } else if (verb === 'QUIT') socket.end('221 bye\r\n');
        else socket.write('250 OK\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

let stack: TestStack;
let smtp: Awaited<ReturnType<typeof fakeSmtp>>;
beforeAll(async () => {
  smtp = await fakeSmtp();
  stack = await startTestStack({
    withWorker: true,
    env: { NEW_WORKSPACE_CREDITS: '777', SMTP_URL: smtp.url, APP_URL: 'https://app.example.com', EMAIL_VERIFICATION: '0' },
  });
});
afterAll(async () => {
  await stack.close();
  await smtp.close();
});

async function team(owner: SessionUser, name = 'Team'): Promise<string> {
  const res = await stack.api.post('/v1/workspaces', { headers: owner.write(), body: { name } });
  expect(res.status).toBe(201);
  return res.body.id;
}

/** Invites `who` with `role` and has them accept: the membership as the API makes it. */
async function join(owner: SessionUser, workspaceId: string, who: SessionUser, role: string): Promise<void> {
  const invited = await stack.api.post(`/v1/workspaces/${workspaceId}/invitations`, {
    headers: owner.write(),
    body: { email: who.email, role },
  });
  expect(invited.status).toBe(201);
  const accepted = await stack.api.post('/v1/invitations/accept', { headers: who.write(), body: { token: invited.body.token } });
  expect(accepted.status).toBe(200);
}

const events = async (workspaceId: string, action: string) =>
  stack.runtime.db
    .selectFrom('audit_events')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('action', '=', action)
    .orderBy('id')
    .execute();

describe('workspaces', () => {
  it('POST /v1/workspaces makes a team workspace the caller owns, with NEW_TEAM_WORKSPACE_CREDITS (0); GET lists every membership', async () => {
    const ada = await signUpUser(stack);
    const res = await stack.api.post('/v1/workspaces', { headers: ada.write(), body: { name: 'Research' } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^ws_/),
      name: 'Research',
      kind: 'team',
      role: 'owner',
      require_two_factor: false,
    });
    const usage = await stack.api.get('/v1/usage/current', { headers: ada.read(res.body.id) });
    // NEW_TEAM_WORKSPACE_CREDITS (default 0), not the personal workspace's NEW_WORKSPACE_CREDITS.
    expect(usage.body).toMatchObject({ credit_limit: 0 });
    const list = await stack.api.get('/v1/workspaces', { headers: ada.read() });
    expect(list.body).toEqual([
      { id: ada.personalWorkspaceId, name: expect.any(String), kind: 'personal', role: 'owner', require_two_factor: false },
      { id: res.body.id, name: 'Research', kind: 'team', role: 'owner', require_two_factor: false },
    ]);
    expect(await events(res.body.id, 'workspace.created')).toHaveLength(1);

    // An API key sees its one workspace, with its role.
    const key = await stack.api.post('/v1/keys', { headers: ada.write(res.body.id), body: { name: 'k', role: 'viewer' } });
    const byKey = await stack.api.get('/v1/workspaces', { headers: { 'X-API-Key': key.body.api_key } });
    expect(byKey.body).toEqual([{ id: res.body.id, name: 'Research', kind: 'team', role: 'viewer', require_two_factor: false }]);
  });

  it('only an owner renames; a workspace the caller is not in is 404 workspace_not_found', async () => {
    const owner = await signUpUser(stack);
    const admin = await signUpUser(stack);
    const workspaceId = await team(owner, 'Old name');
    await join(owner, workspaceId, admin, 'admin');
    const denied = await stack.api.patch(`/v1/workspaces/${workspaceId}`, { headers: admin.write(), body: { name: 'Mine now' } });
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toMatchObject({ error: 'forbidden', required_role: 'owner' });
    const res = await stack.api.patch(`/v1/workspaces/${workspaceId}`, { headers: owner.write(), body: { name: 'New name' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: workspaceId, name: 'New name', kind: 'team', role: 'owner', require_two_factor: false });
    expect((await events(workspaceId, 'workspace.renamed')).map((e) => e.data)).toEqual([{ from: 'Old name', to: 'New name' }]);

    const stranger = await signUpUser(stack);
    for (const [method, path] of [
      ['patch', `/v1/workspaces/${workspaceId}`],
      ['get', `/v1/workspaces/${workspaceId}/members`],
      ['get', `/v1/workspaces/${workspaceId}/invitations`],
      ['get', '/v1/workspaces/ws_nosuchworkspace/members'],
    ] as const) {
      const r = await stack.api.call(method, path, { headers: stranger.write(), body: method === 'patch' ? { name: 'x' } : undefined });
      expect([r.status, r.body.detail.error]).toEqual([404, 'workspace_not_found']);
    }
  });
});

describe('invitations', () => {
  it('invite, list, accept (same email, any case), and the member works in the team with X-Workspace-ID', async () => {
    const owner = await signUpUser(stack);
    const workspaceId = await team(owner, 'Crew');
    // A team workspace starts without credits: grant what the member's jobs below spend.
    await grantWorkspaceCredits(stack, workspaceId, 10_000);
    const res = await stack.api.post(`/v1/workspaces/${workspaceId}/invitations`, {
      headers: owner.write(),
      body: { email: 'Grace.Hopper@Example.com', role: 'member' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^inv_/),
      email: 'grace.hopper@example.com',
      role: 'member',
      created_at: expect.any(String),
      expires_at: expect.any(String),
      token: expect.stringMatching(/^[A-Za-z0-9_-]{40,}$/),
      accept_url: `https://app.example.com/console/invitations/accept?token=${res.body.token}`,
    });
    expect(Math.abs(Date.parse(res.body.expires_at) - Date.now() - 7 * 86_400_000)).toBeLessThan(120_000);
    const stored = await stack.runtime.db.selectFrom('invitations').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(stored)).not.toContain(res.body.token);

    const mail = await eventually(() => smtp.messages.find((m) => m.includes(res.body.token)));
    expect(mail).toMatch(/Crew/);
    expect(mail).toMatch(/grace\.hopper@example\.com/i);

    const pending = await stack.api.get(`/v1/workspaces/${workspaceId}/invitations`, { headers: owner.read() });
    expect(pending.body).toEqual([
      {
        id: res.body.id,
        email: 'grace.hopper@example.com',
        role: 'member',
        created_at: expect.any(String),
        expires_at: res.body.expires_at,
      },
    ]);

    const wrongUser = await signUpUser(stack);
    const mismatch = await stack.api.post('/v1/invitations/accept', { headers: wrongUser.write(), body: { token: res.body.token } });
    expect([mismatch.status, mismatch.body.detail.error]).toEqual([403, 'invitation_email_mismatch']);

    const grace = await signUpUser(stack, { email: 'grace.hopper@example.com' });
    const accepted = await stack.api.post('/v1/invitations/accept', { headers: grace.write(), body: { token: res.body.token } });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({ id: workspaceId, name: 'Crew', kind: 'team', role: 'member', require_two_factor: false });
    const again = await stack.api.post('/v1/invitations/accept', { headers: grace.write(), body: { token: res.body.token } });
    expect([again.status, again.body.detail.error]).toEqual([410, 'invitation_invalid']);
    expect((await stack.api.get(`/v1/workspaces/${workspaceId}/invitations`, { headers: owner.read() })).body).toEqual([]);
    expect((await events(workspaceId, 'member.invited')).map((e) => e.target_id)).toEqual([res.body.id]);
    expect((await events(workspaceId, 'member.joined')).map((e) => [e.actor_type, e.actor_id, e.target_id])).toEqual([
      ['user', grace.userId, grace.userId],
    ]);

    // Every /v1 endpoint works for the member in the team, as for a key.
    const account = await stack.api.get('/v1/account', { headers: grace.read(workspaceId) });
    expect(account.body).toMatchObject({ organization_id: workspaceId, role: 'member', auth_type: 'session' });
    const job = await stack.api.post('/v1/jobs', {
      headers: grace.write(workspaceId),
      body: { operation: 'posts', target: 'natgeo', limit: 3 },
    });
    expect(job.status).toBe(202);
    const done = await waitForJob(stack, grace.read(workspaceId), job.body.id, (j) => j.status === 'completed');
    expect(done.result_count).toBe(3);
    const exported = await stack.api.get(`/v1/jobs/${job.body.id}/export`, { headers: grace.read(workspaceId), query: { format: 'csv' } });
    expect(exported.status).toBe(200);
    const batch = await stack.api.post('/v1/batches', {
      headers: grace.write(workspaceId),
      body: { operation: 'profile', targets: ['nasa', 'esa'] },
    });
    expect(batch.status).toBe(202);
    const schedule = await stack.api.post('/v1/schedules', {
      headers: grace.write(workspaceId),
      body: {
        name: 'daily',
        operation: 'profile',
        targets: ['nasa'],
        frequency: 'daily',
        timezone: 'UTC',
        starts_at: new Date(Date.now() + 3_600_000).toISOString(),
      },
    });
    expect(schedule.status).toBe(201);
    expect((await stack.api.get('/v1/jobs', { headers: owner.read(workspaceId) })).body.map((j: { id: string }) => j.id)).toContain(
      job.body.id,
    );
    // Not in the member's personal workspace.
    expect((await stack.api.get(`/v1/jobs/${job.body.id}`, { headers: grace.read() })).status).toBe(404);
  });

  it('refuses a personal workspace, existing members and owner invitations from admins; revoked and expired tokens are 410', async () => {
    const owner = await signUpUser(stack);
    const personal = await stack.api.post(`/v1/workspaces/${owner.personalWorkspaceId}/invitations`, {
      headers: owner.write(),
      body: { email: 'x@example.com', role: 'member' },
    });
    expect([personal.status, personal.body.detail.error]).toEqual([409, 'personal_workspace']);

    const workspaceId = await team(owner);
    const admin = await signUpUser(stack);
    await join(owner, workspaceId, admin, 'admin');
    const member = await stack.api.post(`/v1/workspaces/${workspaceId}/invitations`, {
      headers: owner.write(),
      body: { email: admin.email.toUpperCase(), role: 'viewer' },
    });
    expect([member.status, member.body.detail.error]).toEqual([409, 'already_member']);
    const ownerInvite = await stack.api.post(`/v1/workspaces/${workspaceId}/invitations`, {
      headers: admin.write(),
      body: { email: 'boss@example.com', role: 'owner' },
    });
    expect(ownerInvite.status).toBe(403);
    expect(ownerInvite.body.detail).toMatchObject({ error: 'forbidden', required_role: 'owner' });

    const invitee = await signUpUser(stack);
    const revoked = await stack.api.post(`/v1/workspaces/${workspaceId}/invitations`, {
      headers: admin.write(),
      body: { email: invitee.email, role: 'member' },
    });
    expect(
      (await stack.api.delete(`/v1/workspaces/${workspaceId}/invitations/${revoked.body.id}`, { headers: admin.write() })).status,
    ).toBe(204);
    const missing = await stack.api.delete(`/v1/workspaces/${workspaceId}/invitations/inv_nosuch`, { headers: admin.write() });
    expect([missing.status, missing.body.detail.error]).toEqual([404, 'invitation_not_found']);
    const afterRevoke = await stack.api.post('/v1/invitations/accept', { headers: invitee.write(), body: { token: revoked.body.token } });
    expect([afterRevoke.status, afterRevoke.body.detail.error]).toEqual([410, 'invitation_invalid']);

    const expiring = await stack.api.post(`/v1/workspaces/${workspaceId}/invitations`, {
      headers: admin.write(),
      body: { email: invitee.email, role: 'member' },
    });
    await sql`update invitations set expires_at = now() - interval '1 second' where id = ${expiring.body.id}`.execute(stack.runtime.db);
    const expired = await stack.api.post('/v1/invitations/accept', { headers: invitee.write(), body: { token: expiring.body.token } });
    expect([expired.status, expired.body.detail.error]).toEqual([410, 'invitation_invalid']);
    const unknown = await stack.api.post('/v1/invitations/accept', { headers: invitee.write(), body: { token: 'no-such-token' } });
    expect([unknown.status, unknown.body.detail.error]).toEqual([410, 'invitation_invalid']);
    expect((await stack.api.get('/v1/account', { headers: invitee.read(workspaceId) })).status).toBe(403);
  });
});

describe('members and roles', () => {
  it('lists members; admins change roles below owner; owners make and unmake owners; never the last owner', async () => {
    const owner = await signUpUser(stack, { displayName: 'Olga' });
    const workspaceId = await team(owner);
    const admin = await signUpUser(stack);
    const member = await signUpUser(stack);
    await join(owner, workspaceId, admin, 'admin');
    await join(owner, workspaceId, member, 'member');
    const list = await stack.api.get(`/v1/workspaces/${workspaceId}/members`, { headers: member.read() });
    expect(list.body).toEqual([
      { user_id: owner.userId, email: owner.email, display_name: 'Olga', role: 'owner', joined_at: expect.any(String) },
      { user_id: admin.userId, email: admin.email, display_name: null, role: 'admin', joined_at: expect.any(String) },
      { user_id: member.userId, email: member.email, display_name: null, role: 'member', joined_at: expect.any(String) },
    ]);

    const promoted = await stack.api.patch(`/v1/workspaces/${workspaceId}/members/${member.userId}`, {
      headers: admin.write(),
      body: { role: 'viewer' },
    });
    expect(promoted.status).toBe(200);
    expect(promoted.body).toMatchObject({ user_id: member.userId, role: 'viewer' });
    expect((await stack.api.get('/v1/account', { headers: member.read(workspaceId) })).body.role).toBe('viewer');
    expect(
      (await stack.api.post('/v1/jobs', { headers: member.write(workspaceId), body: { operation: 'profile', target: 'x' } })).body.detail,
    ).toMatchObject({
      error: 'forbidden',
      required_role: 'member',
    });

    const makeOwner = await stack.api.patch(`/v1/workspaces/${workspaceId}/members/${member.userId}`, {
      headers: admin.write(),
      body: { role: 'owner' },
    });
    expect(makeOwner.body.detail).toMatchObject({ error: 'forbidden', required_role: 'owner' });
    const demoteOwner = await stack.api.patch(`/v1/workspaces/${workspaceId}/members/${owner.userId}`, {
      headers: admin.write(),
      body: { role: 'member' },
    });
    expect(demoteOwner.body.detail).toMatchObject({ error: 'forbidden', required_role: 'owner' });
    const lastOwner = await stack.api.patch(`/v1/workspaces/${workspaceId}/members/${owner.userId}`, {
      headers: owner.write(),
      body: { role: 'admin' },
    });
    expect([lastOwner.status, lastOwner.body.detail.error]).toEqual([409, 'last_owner']);
    const noMember = await stack.api.patch(`/v1/workspaces/${workspaceId}/members/usr_nosuch`, {
      headers: owner.write(),
      body: { role: 'admin' },
    });
    expect([noMember.status, noMember.body.detail.error]).toEqual([404, 'member_not_found']);

    expect(
      (await stack.api.patch(`/v1/workspaces/${workspaceId}/members/${admin.userId}`, { headers: owner.write(), body: { role: 'owner' } }))
        .status,
    ).toBe(200);
    expect(
      (await stack.api.patch(`/v1/workspaces/${workspaceId}/members/${owner.userId}`, { headers: admin.write(), body: { role: 'member' } }))
        .status,
    ).toBe(200);
    const changes = (await events(workspaceId, 'member.role_changed')).map((e) => [e.target_id, e.data]);
    expect(changes).toEqual([
      [member.userId, { from: 'member', to: 'viewer' }],
      [admin.userId, { from: 'admin', to: 'owner' }],
      [owner.userId, { from: 'owner', to: 'member' }],
    ]);
  });

  it('members may leave; removing others needs admin, owners an owner; the last owner stays', async () => {
    const owner = await signUpUser(stack);
    const workspaceId = await team(owner);
    const viewer = await signUpUser(stack);
    const admin = await signUpUser(stack);
    const leaver = await signUpUser(stack);
    await join(owner, workspaceId, viewer, 'viewer');
    await join(owner, workspaceId, admin, 'admin');
    await join(owner, workspaceId, leaver, 'member');

    const byViewer = await stack.api.delete(`/v1/workspaces/${workspaceId}/members/${leaver.userId}`, { headers: viewer.write() });
    expect(byViewer.body.detail).toMatchObject({ error: 'forbidden', required_role: 'admin' });
    expect((await stack.api.delete(`/v1/workspaces/${workspaceId}/members/${leaver.userId}`, { headers: leaver.write() })).status).toBe(
      204,
    );
    expect((await stack.api.get('/v1/account', { headers: leaver.read(workspaceId) })).body.detail.error).toBe('workspace_forbidden');
    const ownerByAdmin = await stack.api.delete(`/v1/workspaces/${workspaceId}/members/${owner.userId}`, { headers: admin.write() });
    expect(ownerByAdmin.body.detail).toMatchObject({ error: 'forbidden', required_role: 'owner' });
    expect((await stack.api.delete(`/v1/workspaces/${workspaceId}/members/${viewer.userId}`, { headers: admin.write() })).status).toBe(204);
    const last = await stack.api.delete(`/v1/workspaces/${workspaceId}/members/${owner.userId}`, { headers: owner.write() });
    expect([last.status, last.body.detail.error]).toEqual([409, 'last_owner']);
    expect((await events(workspaceId, 'member.removed')).map((e) => [e.target_id, e.actor_id])).toEqual([
      [leaver.userId, leaver.userId],
      [viewer.userId, admin.userId],
    ]);
  });

  it('concurrent demotion of the last two owners leaves one owner', async () => {
    for (let round = 0; round < 5; round++) {
      const first = await signUpUser(stack);
      const workspaceId = await team(first);
      const second = await signUpUser(stack);
      await join(first, workspaceId, second, 'owner');
      const [a, b] = await Promise.all([
        stack.api.patch(`/v1/workspaces/${workspaceId}/members/${second.userId}`, { headers: first.write(), body: { role: 'admin' } }),
        stack.api.patch(`/v1/workspaces/${workspaceId}/members/${first.userId}`, { headers: second.write(), body: { role: 'admin' } }),
      ]);
      expect([a, b].filter((r) => r.status === 200)).toHaveLength(1);
      // The other is refused under the lock (both callers were owners when their access was
      // checked: 409 last_owner) or at the access check (the first demotion had committed
      // by then, so its caller is an admin: 403), as the machine's timing has it.
      const refused = [a, b].find((r) => r.status !== 200)!;
      if (refused.status === 409) expect(refused.body.detail.error).toBe('last_owner');
      else expect([refused.status, refused.body.detail.error, refused.body.detail.required_role]).toEqual([403, 'forbidden', 'owner']);
      const owners = await stack.runtime.db
        .selectFrom('memberships')
        .select('user_id')
        .where('workspace_id', '=', workspaceId)
        .where('role', '=', 'owner')
        .execute();
      expect(owners).toHaveLength(1);
      // A refused change wrote no audit event: one role change in all.
      expect(await events(workspaceId, 'member.role_changed')).toHaveLength(1);
    }
  });

  it('concurrent removal of the last two owners leaves one owner', async () => {
    const first = await signUpUser(stack);
    const workspaceId = await team(first);
    const second = await signUpUser(stack);
    await join(first, workspaceId, second, 'owner');
    const results = await Promise.all([
      stack.api.delete(`/v1/workspaces/${workspaceId}/members/${first.userId}`, { headers: first.write() }),
      stack.api.delete(`/v1/workspaces/${workspaceId}/members/${second.userId}`, { headers: second.write() }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([204, 409]);
    const owners = await stack.runtime.db
      .selectFrom('memberships')
      .select('user_id')
      .where('workspace_id', '=', workspaceId)
      .where('role', '=', 'owner')
      .execute();
    expect(owners).toHaveLength(1);
  });
});
