import { checkSecondFactor, sealerOf, timeStepAt, totpAt } from '@sdx/domain/testing';
import { signUpUser, startTestStack, type SessionUser, type TestStack } from '@sdx/testing';

/**
 * Two-factor sign-in (extensions-2.md 2 and 6) over HTTP: setup, enable, sign-in with a code or
 * a recovery code, each accepted once, the ±1 step window on an injected clock, disable, and
 * require_two_factor per workspace (sessions refused, API keys not).
 */

/** The service's clock, pinned to the middle of a 30 s step and moved by whole steps. */
const clock = {
  at: (Math.floor(Date.now() / 30_000) * 30 + 15) * 1000,
  now() {
    return new Date(this.at);
  },
  step(n = 1) {
    this.at += n * 30_000;
  },
};
/** The code of `secret` `offset` steps from the service's clock. */
const code = (secret: string, offset = 0) => totpAt(secret, new Date(clock.at + offset * 30_000));

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ clock });
});
afterAll(async () => {
  await stack.close();
});

const db = () => stack.runtime.db;
const userRow = (userId: string) => db().selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirstOrThrow();
const events = (workspaceId: string, action: string) =>
  db().selectFrom('audit_events').selectAll().where('workspace_id', '=', workspaceId).where('action', '=', action).orderBy('id').execute();
const logIn = (user: SessionUser, otp?: string, password = user.password) =>
  stack.api.post('/v1/auth/login', { body: otp === undefined ? { email: user.email, password } : { email: user.email, password, otp } });

/** Turns two-factor sign-in on through the API; the clock then moves a step, so the next code is fresh. */
async function withTwoFactor(user: SessionUser): Promise<{ secret: string; recoveryCodes: string[] }> {
  const setup = await stack.api.post('/v1/auth/2fa/setup', { headers: user.write() });
  expect(setup.status).toBe(200);
  const enabled = await stack.api.post('/v1/auth/2fa/enable', { headers: user.write(), body: { code: code(setup.body.secret) } });
  expect(enabled.status).toBe(200);
  clock.step();
  return { secret: setup.body.secret, recoveryCodes: enabled.body.recovery_codes };
}

async function team(owner: SessionUser, name: string): Promise<string> {
  const res = await stack.api.post('/v1/workspaces', { headers: owner.write(), body: { name } });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

describe('setup and enable', () => {
  it('gives a base32 secret and its otpauth URL, turns on with a current code, and shows it on the user', async () => {
    const ada = await signUpUser(stack);
    const first = await stack.api.post('/v1/auth/2fa/setup', { headers: ada.write() });
    expect(first.status).toBe(200);
    expect(first.body.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(first.body.otpauth_url).toContain(`otpauth://totp/Social%20Data:${encodeURIComponent(ada.email)}?`);
    expect(first.body.otpauth_url).toContain(`secret=${first.body.secret}`);
    // Stored sealed, never in clear.
    const stored = await userRow(ada.userId);
    expect(stored.two_factor_secret).toMatch(/^sealed:v1:/);
    expect(stored.two_factor_secret).not.toContain(first.body.secret);
    expect(sealerOf(stack.config).open(stored.two_factor_secret!)).toBe(first.body.secret);
    expect(stored.two_factor_enabled_at).toBeNull();

    // A new setup replaces one not confirmed: the first secret's code no longer turns it on.
    const second = await stack.api.post('/v1/auth/2fa/setup', { headers: ada.write() });
    expect(second.body.secret).not.toBe(first.body.secret);
    const stale = await stack.api.post('/v1/auth/2fa/enable', { headers: ada.write(), body: { code: code(first.body.secret) } });
    expect(stale.status).toBe(401);
    expect(stale.body.detail.error).toBe('invalid_otp');
    const notDigits = await stack.api.post('/v1/auth/2fa/enable', { headers: ada.write(), body: { code: 'abcdef' } });
    expect(notDigits.body.detail.error).toBe('invalid_otp');

    const enabled = await stack.api.post('/v1/auth/2fa/enable', { headers: ada.write(), body: { code: code(second.body.secret) } });
    expect(enabled.status).toBe(200);
    const codes = enabled.body.recovery_codes as string[];
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) expect(c).toMatch(/^[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}$/);
    const hashes = await db().selectFrom('two_factor_recovery_codes').selectAll().where('user_id', '=', ada.userId).execute();
    expect(hashes).toHaveLength(10);
    for (const row of hashes) {
      expect(row.code_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(codes.some((c) => row.code_hash.includes(c) || row.code_hash.includes(c.replace(/-/g, '')))).toBe(false);
    }
    const after = await userRow(ada.userId);
    expect(after.two_factor_enabled_at).not.toBeNull();
    expect(Number(after.two_factor_last_step)).toBe(timeStepAt(clock.now()));
    expect(await events(ada.personalWorkspaceId, 'user.two_factor_enabled')).toEqual([
      expect.objectContaining({ actor_type: 'user', actor_id: ada.userId, target_type: 'user', target_id: ada.userId }),
    ]);

    // The user object says so wherever it appears.
    const session = await stack.api.get('/v1/auth/session', { headers: ada.read() });
    expect(session.body.user.two_factor_enabled).toBe(true);

    // On already: setup and enable are 409 two_factor_enabled.
    const again = await stack.api.post('/v1/auth/2fa/setup', { headers: ada.write() });
    expect(again.status).toBe(409);
    expect(again.body.detail.error).toBe('two_factor_enabled');
    const reEnable = await stack.api.post('/v1/auth/2fa/enable', { headers: ada.write(), body: { code: code(second.body.secret, 1) } });
    expect(reEnable.status).toBe(409);
    expect(reEnable.body.detail.error).toBe('two_factor_enabled');
    clock.step();
  });

  it('enable without setup is 409 two_factor_not_set_up', async () => {
    const bob = await signUpUser(stack);
    const res = await stack.api.post('/v1/auth/2fa/enable', { headers: bob.write(), body: { code: '123456' } });
    expect(res.status).toBe(409);
    expect(res.body.detail.error).toBe('two_factor_not_set_up');
  });

  it('GET /v1/account shows two_factor_enabled on its user, as the session does', async () => {
    const bo = await signUpUser(stack);
    expect((await stack.api.get('/v1/auth/session', { headers: bo.read() })).body.user.two_factor_enabled).toBe(false);
    expect((await stack.api.get('/v1/account', { headers: bo.read() })).body.user.two_factor_enabled).toBe(false);
    await withTwoFactor(bo);
    expect((await stack.api.get('/v1/account', { headers: bo.read() })).body.user.two_factor_enabled).toBe(true);
  });

  it('wrong codes at enable count as failed sign-ins: the 11th attempt is 429', async () => {
    const cy = await signUpUser(stack);
    const setup = await stack.api.post('/v1/auth/2fa/setup', { headers: cy.write() });
    const right = code(setup.body.secret);
    const wrong = String((Number(right) + 500_000) % 1_000_000).padStart(6, '0');
    for (let i = 0; i < 10; i += 1) {
      const res = await stack.api.post('/v1/auth/2fa/enable', { headers: cy.write(), body: { code: wrong } });
      expect(res.status).toBe(401);
    }
    const limited = await stack.api.post('/v1/auth/2fa/enable', { headers: cy.write(), body: { code: right } });
    expect(limited.status).toBe(429);
    expect(limited.body.detail.error).toBe('rate_limit_exceeded');
    expect(limited.headers['retry-after']).toBeDefined();
  });

  it('is for signed-in users only: an API key is 403 forbidden, no credential 401', async () => {
    const dee = await signUpUser(stack);
    const key = await stack.api.post('/v1/keys', { headers: dee.write(), body: { name: 'k', role: 'owner' } });
    for (const path of ['/v1/auth/2fa/setup', '/v1/auth/2fa/enable', '/v1/auth/2fa/disable']) {
      const body = path.endsWith('setup') ? undefined : path.endsWith('enable') ? { code: '123456' } : { password: 'x', code: '123456' };
      const byKey = await stack.api.post(path, { headers: { 'X-API-Key': key.body.api_key }, body });
      expect(byKey.status).toBe(403);
      expect(byKey.body.detail).toMatchObject({ error: 'forbidden', required_auth: 'session' });
      expect((await stack.api.post(path, { body })).status).toBe(401);
      const noCsrf = await stack.api.post(path, { headers: dee.read(), body });
      expect(noCsrf.body.detail.error).toBe('csrf_failed');
    }
  });
});

describe('sign-in with two-factor sign-in on', () => {
  it('needs a code: none is 401 otp_required, a current one 200 once, then 401 invalid_otp', async () => {
    const eve = await signUpUser(stack);
    const { secret } = await withTwoFactor(eve);

    const none = await logIn(eve);
    expect(none.status).toBe(401);
    expect(none.body.detail.error).toBe('otp_required');
    // A wrong password says nothing of the second factor.
    const wrongPassword = await logIn(eve, code(secret), 'not the password');
    expect(wrongPassword.status).toBe(401);
    expect(wrongPassword.body.detail.error).toBe('invalid_credentials');

    const current = code(secret);
    const ok = await logIn(eve, current);
    expect(ok.status).toBe(200);
    expect(ok.body.user.two_factor_enabled).toBe(true);
    const replay = await logIn(eve, current);
    expect(replay.status).toBe(401);
    expect(replay.body.detail.error).toBe('invalid_otp');
    // Under the console's "Wrong code" heading, the message does not say it again.
    expect(replay.body.detail.message).toBe(
      'That code is not the current one, or it was used already: enter the code your authenticator app shows now.',
    );
    expect(replay.body.detail.message).not.toMatch(/wrong/i);
    const wrong = await logIn(eve, String((Number(code(secret, 1)) + 1) % 1_000_000).padStart(6, '0'));
    expect(wrong.body.detail.error).toBe('invalid_otp');
  });

  it('takes each recovery code once, typed in any case and spacing', async () => {
    const fay = await signUpUser(stack);
    const { recoveryCodes } = await withTwoFactor(fay);
    const first = await logIn(fay, recoveryCodes[0]);
    expect(first.status).toBe(200);
    const twice = await logIn(fay, recoveryCodes[0]);
    expect(twice.status).toBe(401);
    expect(twice.body.detail.error).toBe('invalid_otp');
    const typed = await logIn(fay, recoveryCodes[1].toUpperCase().replace(/-/g, ' '));
    expect(typed.status).toBe(200);
    const used = await db()
      .selectFrom('two_factor_recovery_codes')
      .select('used_at')
      .where('user_id', '=', fay.userId)
      .where('used_at', 'is not', null)
      .execute();
    expect(used).toHaveLength(2);
    const made = await logIn(fay, 'zzzz-zzzz-zzzz');
    expect(made.body.detail.error).toBe('invalid_otp');
  });

  it('accepts one step either side of the clock and refuses two; a step counts once and never goes back', async () => {
    const gus = await signUpUser(stack);
    const { secret } = await withTwoFactor(gus);
    clock.step(5);
    for (const far of [-2, 2]) {
      const res = await logIn(gus, code(secret, far));
      expect(res.status).toBe(401);
      expect(res.body.detail.error).toBe('invalid_otp');
    }
    expect((await logIn(gus, code(secret, -1))).status).toBe(200);
    expect((await logIn(gus, code(secret, 1))).status).toBe(200);
    // The step after the clock was used: the current step is before it, so its code is refused.
    const current = await logIn(gus, code(secret, 0));
    expect(current.status).toBe(401);
    expect(current.body.detail.error).toBe('invalid_otp');
    clock.step(2);
    expect((await logIn(gus, code(secret, 0))).status).toBe(200);
  });

  it('lets only one of two parallel sign-ins use the same code', async () => {
    const hal = await signUpUser(stack);
    const { secret } = await withTwoFactor(hal);
    const same = code(secret);
    const answers = await Promise.all([logIn(hal, same), logIn(hal, same), logIn(hal, same)]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 401, 401]);
  });

  it('checkSecondFactor passes a user without 2FA at once and spends a code of one with it', async () => {
    const ivy = await signUpUser(stack);
    await expect(checkSecondFactor(stack.runtime.services, await userRow(ivy.userId), undefined)).resolves.toBeUndefined();
    const { secret } = await withTwoFactor(ivy);
    const row = await userRow(ivy.userId);
    await expect(checkSecondFactor(stack.runtime.services, row, undefined)).rejects.toMatchObject({ code: 'otp_required', status: 401 });
    await expect(checkSecondFactor(stack.runtime.services, row, ' ')).rejects.toMatchObject({ code: 'otp_required' });
    const current = code(secret);
    await expect(checkSecondFactor(stack.runtime.services, row, current)).resolves.toBeUndefined();
    // The row read before is stale, but the conditional update still refuses the spent step.
    await expect(checkSecondFactor(stack.runtime.services, row, current)).rejects.toMatchObject({ code: 'invalid_otp', status: 401 });
  });
});

describe('disable', () => {
  it('needs the password and an unspent code, deletes the secret and the codes, and is audited', async () => {
    const jo = await signUpUser(stack);
    const { secret, recoveryCodes } = await withTwoFactor(jo);
    const wrongPassword = await stack.api.post('/v1/auth/2fa/disable', {
      headers: jo.write(),
      body: { password: 'not the password', code: code(secret) },
    });
    expect(wrongPassword.status).toBe(401);
    expect(wrongPassword.body.detail.error).toBe('invalid_credentials');
    const wrongCode = await stack.api.post('/v1/auth/2fa/disable', {
      headers: jo.write(),
      body: { password: jo.password, code: 'aaaa-bbbb-cccc' },
    });
    expect(wrongCode.status).toBe(401);
    expect(wrongCode.body.detail.error).toBe('invalid_otp');
    // The code of the step that enable spent is refused too.
    const spent = await stack.api.post('/v1/auth/2fa/disable', {
      headers: jo.write(),
      body: { password: jo.password, code: code(secret, -1) },
    });
    expect(spent.body.detail.error).toBe('invalid_otp');
    expect((await userRow(jo.userId)).two_factor_enabled_at).not.toBeNull();

    const off = await stack.api.post('/v1/auth/2fa/disable', {
      headers: jo.write(),
      body: { password: jo.password, code: recoveryCodes[3] },
    });
    expect(off.status).toBe(204);
    const row = await userRow(jo.userId);
    expect([row.two_factor_secret, row.two_factor_enabled_at, row.two_factor_last_step]).toEqual([null, null, null]);
    expect(await db().selectFrom('two_factor_recovery_codes').selectAll().where('user_id', '=', jo.userId).execute()).toEqual([]);
    expect(await events(jo.personalWorkspaceId, 'user.two_factor_disabled')).toHaveLength(1);
    expect((await stack.api.get('/v1/auth/session', { headers: jo.read() })).body.user.two_factor_enabled).toBe(false);

    const again = await stack.api.post('/v1/auth/2fa/disable', {
      headers: jo.write(),
      body: { password: jo.password, code: code(secret) },
    });
    expect(again.status).toBe(409);
    expect(again.body.detail.error).toBe('two_factor_not_set_up');
    expect((await logIn(jo)).status).toBe(200);
  });

  it('takes a current authenticator code too', async () => {
    const kit = await signUpUser(stack);
    const { secret } = await withTwoFactor(kit);
    const off = await stack.api.post('/v1/auth/2fa/disable', {
      headers: kit.write(),
      body: { password: kit.password, code: code(secret) },
    });
    expect(off.status).toBe(204);
  });
});

describe('require_two_factor per workspace', () => {
  it('needs the owner’s own 2FA to turn on (409), then refuses sessions without 2FA (403) but not API keys or other workspaces', async () => {
    const owner = await signUpUser(stack);
    const member = await signUpUser(stack);
    const workspaceId = await team(owner, 'Strict');
    const otherId = await team(member, 'Relaxed');
    await db().insertInto('memberships').values({ workspace_id: workspaceId, user_id: member.userId, role: 'member' }).execute();

    const refused = await stack.api.patch(`/v1/workspaces/${workspaceId}`, { headers: owner.write(), body: { require_two_factor: true } });
    expect(refused.status).toBe(409);
    expect(refused.body.detail.error).toBe('two_factor_required');
    const key = await stack.api.post('/v1/keys', { headers: owner.write(workspaceId), body: { name: 'automation', role: 'owner' } });
    expect(key.status).toBe(201);
    const byKey = { 'X-API-Key': key.body.api_key as string };
    // A key has no account of its own to show two-factor sign-in.
    const keyTurnsOn = await stack.api.patch(`/v1/workspaces/${workspaceId}`, { headers: byKey, body: { require_two_factor: true } });
    expect(keyTurnsOn.status).toBe(409);
    expect(keyTurnsOn.body.detail.error).toBe('two_factor_required');

    await withTwoFactor(owner);
    const on = await stack.api.patch(`/v1/workspaces/${workspaceId}`, {
      headers: owner.write(),
      body: { require_two_factor: true, name: 'Strict lab' },
    });
    expect(on.status).toBe(200);
    expect(on.body).toEqual({ id: workspaceId, name: 'Strict lab', kind: 'team', role: 'owner', require_two_factor: true });
    expect((await events(workspaceId, 'workspace.two_factor_changed')).map((e) => [e.actor_id, e.data])).toEqual([
      [owner.userId, { require_two_factor: true }],
    ]);
    expect(await events(workspaceId, 'workspace.renamed')).toHaveLength(1);

    // The member without 2FA: refused in this workspace...
    for (const [method, path] of [
      ['get', '/v1/usage/current'],
      ['get', '/v1/jobs'],
      ['get', `/v1/workspaces/${workspaceId}/members`],
    ] as const) {
      const res = await stack.api[method](path, { headers: member.read(workspaceId) });
      expect(res.status).toBe(403);
      expect(res.body.detail.error).toBe('two_factor_required');
    }
    // ...but the routes about themselves still answer with that workspace selected,
    expect((await stack.api.get('/v1/auth/session', { headers: member.read(workspaceId) })).status).toBe(200);
    const list = await stack.api.get('/v1/workspaces', { headers: member.read(workspaceId) });
    expect(list.status).toBe(200);
    expect(list.body).toContainEqual({ id: workspaceId, name: 'Strict lab', kind: 'team', role: 'member', require_two_factor: true });
    // ...their other workspaces answer,
    expect((await stack.api.get('/v1/usage/current', { headers: member.read(otherId) })).status).toBe(200);
    expect((await stack.api.get('/v1/usage/current', { headers: member.read() })).status).toBe(200);
    // ...the owner (with 2FA) and the workspace's API key are unaffected.
    expect((await stack.api.get('/v1/usage/current', { headers: owner.read(workspaceId) })).status).toBe(200);
    expect((await stack.api.get('/v1/usage/current', { headers: byKey })).status).toBe(200);
    expect((await stack.api.get('/v1/jobs', { headers: byKey })).status).toBe(200);

    // Setting up 2FA from inside the refused workspace works, and then the workspace answers.
    const setup = await stack.api.post('/v1/auth/2fa/setup', { headers: member.write(workspaceId) });
    expect(setup.status).toBe(200);
    const enabled = await stack.api.post('/v1/auth/2fa/enable', {
      headers: member.write(workspaceId),
      body: { code: code(setup.body.secret) },
    });
    expect(enabled.status).toBe(200);
    expect((await stack.api.get('/v1/usage/current', { headers: member.read(workspaceId) })).status).toBe(200);

    // A key may turn the rule off (only turning it on needs an account with 2FA).
    const off = await stack.api.patch(`/v1/workspaces/${workspaceId}`, { headers: byKey, body: { require_two_factor: false } });
    expect(off.status).toBe(200);
    expect(off.body.require_two_factor).toBe(false);
    expect((await events(workspaceId, 'workspace.two_factor_changed')).map((e) => [e.actor_type, e.data])).toEqual([
      ['user', { require_two_factor: true }],
      ['api_key', { require_two_factor: false }],
    ]);
  });

  it('refuses an owner who turned 2FA off in the workspace that requires it', async () => {
    const owner = await signUpUser(stack);
    const workspaceId = await team(owner, 'Owner leaves 2FA');
    const { secret } = await withTwoFactor(owner);
    expect(
      (await stack.api.patch(`/v1/workspaces/${workspaceId}`, { headers: owner.write(), body: { require_two_factor: true } })).status,
    ).toBe(200);
    const off = await stack.api.post('/v1/auth/2fa/disable', {
      headers: owner.write(workspaceId),
      body: { password: owner.password, code: code(secret) },
    });
    expect(off.status).toBe(204);
    const res = await stack.api.patch(`/v1/workspaces/${workspaceId}`, { headers: owner.write(), body: { require_two_factor: false } });
    expect(res.status).toBe(403);
    expect(res.body.detail.error).toBe('two_factor_required');
  });
});
