import { signUpUser, startTestStack, type SessionUser, type TestStack } from '@sdx/testing';

/**
 * extensions-2.md 2, over HTTP: keys follow their creator (removal, demotion, down the chain of
 * keys made by keys), a password change that revokes the user's keys, and the bound on team
 * workspaces, which start without credits.
 */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ env: { NEW_WORKSPACE_CREDITS: '500' } });
});
afterAll(async () => {
  await stack.close();
});

interface Key {
  id: string;
  secret: string;
}

async function team(owner: SessionUser, name = 'Team'): Promise<string> {
  const res = await stack.api.post('/v1/workspaces', { headers: owner.write(), body: { name } });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

async function join(owner: SessionUser, workspaceId: string, who: SessionUser, role: string): Promise<void> {
  const invited = await stack.api.post(`/v1/workspaces/${workspaceId}/invitations`, {
    headers: owner.write(),
    body: { email: who.email, role },
  });
  expect(invited.status).toBe(201);
  const accepted = await stack.api.post('/v1/invitations/accept', { headers: who.write(), body: { token: invited.body.token } });
  expect(accepted.status).toBe(200);
}

async function key(headers: Record<string, string>, role: string, name = `${role} key`): Promise<Key> {
  const res = await stack.api.post('/v1/keys', { headers, body: { name, role } });
  expect(res.status).toBe(201);
  return { id: res.body.id, secret: res.body.api_key };
}

const asKey = (k: Key) => ({ 'X-API-Key': k.secret });

/** 200 while the key works, 401 once it is revoked. */
async function statusWith(k: Key): Promise<number> {
  return (await stack.api.get('/v1/account', { headers: asKey(k) })).status;
}

/** The api_key.revoked events of a workspace, as GET /v1/audit-events shows them. */
async function revocations(
  headers: Record<string, string>,
): Promise<Array<{ target_id: string; actor: { type: string; id: string | null }; data: Record<string, unknown> }>> {
  const res = await stack.api.get('/v1/audit-events', { headers, query: { limit: 100 } });
  expect(res.status).toBe(200);
  return res.body.filter((e: { action: string }) => e.action === 'api_key.revoked');
}

describe('keys follow their creator', () => {
  it('a demotion revokes the keys above the new role and everything made with them, down the chain; a removal revokes the rest; each audited with actor system', async () => {
    const ada = await signUpUser(stack);
    const bob = await signUpUser(stack);
    const workspaceId = await team(ada, 'Keys follow');
    await join(ada, workspaceId, bob, 'admin');
    const adaKey = await key(ada.write(workspaceId), 'admin', "ada's");
    const bobPersonal = await key(bob.write(), 'owner', "bob's personal");

    // Bob's admin key mints an admin key and a viewer key; the admin one mints another viewer key.
    const k1 = await key(bob.write(workspaceId), 'admin', 'k1');
    const k2 = await key(asKey(k1), 'admin', 'k2');
    const k3 = await key(asKey(k1), 'viewer', 'k3');
    const k4 = await key(asKey(k2), 'viewer', 'k4');
    // A viewer key Bob made himself, within a member's reach.
    const k5 = await key(bob.write(workspaceId), 'viewer', 'k5');
    for (const k of [k1, k2, k3, k4, k5]) expect(await statusWith(k)).toBe(200);

    const demoted = await stack.api.patch(`/v1/workspaces/${workspaceId}/members/${bob.userId}`, {
      headers: ada.write(),
      body: { role: 'member' },
    });
    expect(demoted.status).toBe(200);
    // The admin keys are gone at once, and with them what they made (extensions-3.md 1), whatever its role.
    for (const k of [k1, k2, k3, k4]) expect(await statusWith(k)).toBe(401);
    expect(await statusWith(k5)).toBe(200);
    const afterDemotion = await revocations(ada.read(workspaceId));
    expect(afterDemotion.map((e) => e.target_id).sort()).toEqual([k1.id, k2.id, k3.id, k4.id].sort());
    for (const event of afterDemotion) expect(event.actor.type).toBe('system');
    const byTarget = new Map(afterDemotion.map((e) => [e.target_id, e]));
    for (const k of [k1, k2])
      expect(byTarget.get(k.id)!.data).toMatchObject({ reason: 'creator_demoted', creator: bob.userId, role: 'admin' });
    expect(byTarget.get(k3.id)!.data).toMatchObject({ reason: 'creator_revoked', created_by: k1.id });
    expect(byTarget.get(k4.id)!.data).toMatchObject({ reason: 'creator_revoked', created_by: k2.id });

    const removed = await stack.api.delete(`/v1/workspaces/${workspaceId}/members/${bob.userId}`, { headers: ada.write() });
    expect(removed.status).toBe(204);
    for (const k of [k1, k2, k3, k4, k5]) expect(await statusWith(k)).toBe(401);
    const afterRemoval = (await revocations(ada.read(workspaceId))).filter((e) => e.data.reason === 'creator_removed');
    expect(afterRemoval.map((e) => e.target_id)).toEqual([k5.id]);
    expect(afterRemoval.every((e) => e.actor.type === 'system' && e.data.creator === bob.userId)).toBe(true);

    // Keys of others, and Bob's keys elsewhere, are untouched.
    expect(await statusWith(adaKey)).toBe(200);
    expect(await statusWith(bobPersonal)).toBe(200);
  });

  it('a member who leaves takes their keys along; a promotion revokes nothing', async () => {
    const ada = await signUpUser(stack);
    const cy = await signUpUser(stack);
    const workspaceId = await team(ada, 'Leavers');
    await join(ada, workspaceId, cy, 'admin');
    const before = await key(cy.write(workspaceId), 'admin');
    const promoted = await stack.api.patch(`/v1/workspaces/${workspaceId}/members/${cy.userId}`, {
      headers: ada.write(),
      body: { role: 'owner' },
    });
    expect(promoted.status).toBe(200);
    expect(await statusWith(before)).toBe(200);
    const demotedToAdmin = await stack.api.patch(`/v1/workspaces/${workspaceId}/members/${cy.userId}`, {
      headers: ada.write(),
      body: { role: 'admin' },
    });
    expect(demotedToAdmin.status).toBe(200);
    // Admin keys sit at the new role, not above it.
    expect(await statusWith(before)).toBe(200);

    const left = await stack.api.delete(`/v1/workspaces/${workspaceId}/members/${cy.userId}`, { headers: cy.write(workspaceId) });
    expect(left.status).toBe(204);
    expect(await statusWith(before)).toBe(401);
    const events = await revocations(ada.read(workspaceId));
    expect(events).toEqual([
      expect.objectContaining({
        target_id: before.id,
        actor: { type: 'system', id: expect.any(String) },
        data: expect.objectContaining({ reason: 'creator_removed' }),
      }),
    ]);
  });

  it('a refused removal (the last owner) revokes nothing', async () => {
    const ada = await signUpUser(stack);
    const workspaceId = await team(ada, 'Alone');
    const own = await key(ada.write(workspaceId), 'owner');
    const refused = await stack.api.delete(`/v1/workspaces/${workspaceId}/members/${ada.userId}`, { headers: ada.write(workspaceId) });
    expect(refused.status).toBe(409);
    expect(refused.body.detail.error).toBe('last_owner');
    expect(await statusWith(own)).toBe(200);
    expect(await revocations(ada.read(workspaceId))).toEqual([]);
  });
});

describe('password change', () => {
  it('keeps the keys by default; with revoke_api_keys revokes every key the user made, in every workspace, audited with the user as actor', async () => {
    const dan = await signUpUser(stack);
    const ada = await signUpUser(stack);
    const workspaceId = await team(ada, 'Shared');
    await join(ada, workspaceId, dan, 'admin');
    const personal = await key(dan.write(), 'owner', 'personal');
    const inTeam = await key(dan.write(workspaceId), 'admin', 'team');
    const minted = await key(asKey(inTeam), 'viewer', 'minted by a key');
    const adaKey = await key(ada.write(workspaceId), 'admin', "ada's");

    const kept = await stack.api.post('/v1/auth/password', {
      headers: dan.write(),
      body: { current_password: dan.password, new_password: 'a new password 1' },
    });
    expect(kept.status).toBe(204);
    for (const k of [personal, inTeam, minted]) expect(await statusWith(k)).toBe(200);

    const wrong = await stack.api.post('/v1/auth/password', {
      headers: dan.write(),
      body: { current_password: 'not it at all', new_password: 'a new password 2', revoke_api_keys: true },
    });
    expect(wrong.status).toBe(401);
    for (const k of [personal, inTeam, minted]) expect(await statusWith(k)).toBe(200);

    const revoked = await stack.api.post('/v1/auth/password', {
      headers: dan.write(),
      body: { current_password: 'a new password 1', new_password: 'a new password 2', revoke_api_keys: true },
    });
    expect(revoked.status).toBe(204);
    for (const k of [personal, inTeam, minted]) expect(await statusWith(k)).toBe(401);
    expect(await statusWith(adaKey)).toBe(200);

    const teamEvents = await revocations(ada.read(workspaceId));
    expect(teamEvents.map((e) => e.target_id).sort()).toEqual([inTeam.id, minted.id].sort());
    const personalEvents = await revocations(dan.read());
    expect(personalEvents.map((e) => e.target_id)).toEqual([personal.id]);
    for (const event of [...teamEvents, ...personalEvents]) {
      expect(event.actor).toEqual({ type: 'user', id: dan.userId });
      expect(event.data).toMatchObject({ reason: 'password_changed' });
    }
  });
});

describe('team workspaces', () => {
  it('start with no credits, and the sixth is 403 workspace_limit_reached (MAX_TEAM_WORKSPACES_PER_USER 5)', async () => {
    const eve = await signUpUser(stack);
    // The personal workspace keeps NEW_WORKSPACE_CREDITS.
    const personal = await stack.api.get('/v1/usage/current', { headers: eve.read() });
    expect(personal.body).toMatchObject({ credit_limit: 500 });

    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push(await team(eve, `Farm ${i}`));
    for (const workspaceId of made) {
      const usage = await stack.api.get('/v1/usage/current', { headers: eve.read(workspaceId) });
      expect(usage.status).toBe(200);
      expect(usage.body).toMatchObject({ credit_limit: 0 });
    }
    const paid = await stack.api.post('/v1/jobs', {
      headers: eve.write(made[0]),
      body: { platform: 'twitter', operation: 'followers', target: 'nasa' },
    });
    expect(paid.status).toBe(402);
    expect(paid.body.detail.error).toBe('insufficient_credits');

    const sixth = await stack.api.post('/v1/workspaces', { headers: eve.write(), body: { name: 'One more' } });
    expect(sixth.status).toBe(403);
    expect(sixth.body).toEqual({ detail: { error: 'workspace_limit_reached', message: expect.any(String), limit: 5 } });
    const listed = await stack.api.get('/v1/workspaces', { headers: eve.read() });
    expect(listed.body.filter((w: { kind: string }) => w.kind === 'team')).toHaveLength(5);

    const rows = await stack.runtime.db.selectFrom('workspaces').select(['id', 'created_by']).where('id', 'in', made).execute();
    expect(rows.every((row) => row.created_by === eve.userId)).toBe(true);
  });

  it('counts the workspaces the user made, not those they joined', async () => {
    const fay = await signUpUser(stack);
    const gus = await signUpUser(stack);
    for (let i = 0; i < 5; i++) await join(gus, await team(gus, `Gus ${i}`), fay, 'owner');
    expect((await stack.api.post('/v1/workspaces', { headers: fay.write(), body: { name: 'Mine' } })).status).toBe(201);
    expect((await stack.api.post('/v1/workspaces', { headers: gus.write(), body: { name: 'Sixth' } })).status).toBe(403);
  });

  it('concurrent requests cannot pass the bound together', async () => {
    const hal = await signUpUser(stack);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => stack.api.post('/v1/workspaces', { headers: hal.write(), body: { name: `Race ${i}` } })),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([201, 201, 201, 201, 201, 403, 403, 403]);
  });
});
