import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { createApp, RedisRateLimiter } from '@sdx/app-api';
import { createRuntime, type Runtime } from '@sdx/runtime';
import { cookieFrom, logInUser, signUpUser, startTestStack, untilRedisReady, type SessionUser, type TestStack } from '@sdx/testing';

/** extensions.md 1: users, sign-up, sign-in, sessions, CSRF, X-Workspace-ID, and how keys and sessions meet. */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ env: { NEW_WORKSPACE_CREDITS: '1234' } });
});
afterAll(async () => {
  await stack.close();
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const tokenOf = (user: SessionUser) => user.cookie.slice('sdx_session='.length);

describe('sign-up', () => {
  it('creates the user, a personal workspace with NEW_WORKSPACE_CREDITS, and a session', async () => {
    const res = await stack.api.post('/v1/auth/signup', {
      body: { email: 'Ada@Example.com', password: 'correct horse battery', display_name: 'Ada' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      user: {
        id: expect.stringMatching(/^usr_/),
        email: 'ada@example.com',
        display_name: 'Ada',
        avatar_url: null,
        two_factor_enabled: false,
      },
      workspaces: [
        { id: expect.stringMatching(/^ws_/), name: expect.any(String), kind: 'personal', role: 'owner', require_two_factor: false },
      ],
      default_workspace_id: null,
      csrf_token: expect.stringMatching(/^[A-Za-z0-9_-]{40,}$/),
    });
    const setCookie = (res.headers['set-cookie'] as unknown as string[]).find((c) => c.startsWith('sdx_session='))!;
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Lax/);
    expect(setCookie).toMatch(/Path=\//);
    expect(setCookie).not.toMatch(/Secure/);
    const cookie = cookieFrom(res)!;
    const usage = await stack.api.get('/v1/usage/current', { headers: { Cookie: cookie } });
    expect(usage.body).toMatchObject({ credit_limit: 1234, credits_remaining: 1234 });

    // Only hashes are stored: argon2id for the password, SHA-256 for the session token.
    const user = await stack.runtime.db.selectFrom('users').selectAll().where('id', '=', res.body.user.id).executeTakeFirstOrThrow();
    expect(user.password_hash).toMatch(/^\$argon2id\$/);
    expect(user.password_hash).not.toContain('correct horse battery');
    const token = cookie.slice('sdx_session='.length);
    const session = await stack.runtime.db.selectFrom('sessions').selectAll().where('user_id', '=', user.id).executeTakeFirstOrThrow();
    expect(session.token_hash).toBe(sha256(token));
    expect(JSON.stringify(session)).not.toContain(token);
    const personal = await stack.runtime.db
      .selectFrom('workspaces')
      .selectAll()
      .where('id', '=', res.body.workspaces[0].id)
      .executeTakeFirstOrThrow();
    expect(personal).toMatchObject({ kind: 'personal', personal_user_id: user.id, monthly_quota: 1234 });
  });

  it('compares emails case-insensitively: 409 email_taken', async () => {
    await signUpUser(stack, { email: 'grace@example.com' });
    const res = await stack.api.post('/v1/auth/signup', { body: { email: 'GRACE@example.com', password: 'another password' } });
    expect(res.status).toBe(409);
    expect(res.body.detail.error).toBe('email_taken');
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('takes passwords of 10 to 128 characters, and never returns or logs them', async () => {
    for (const password of ['123456789', 'x'.repeat(129)]) {
      const res = await stack.api.post('/v1/auth/signup', { body: { email: `len${password.length}@example.com`, password } });
      expect(res.status).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['body', 'password']);
      expect(JSON.stringify(res.body)).not.toContain(password);
    }
    expect((await stack.api.post('/v1/auth/signup', { body: { email: 'len10@example.com', password: '1234567890' } })).status).toBe(201);
    expect((await stack.api.post('/v1/auth/signup', { body: { email: 'len128@example.com', password: 'y'.repeat(128) } })).status).toBe(
      201,
    );
    expect((await stack.api.post('/v1/auth/signup', { body: { email: 'not-an-email', password: '1234567890' } })).status).toBe(422);
  });

  it('is closed with SIGNUP_ENABLED=0: 403 signup_disabled', async () => {
    const closed = await startTestStack({ env: { SIGNUP_ENABLED: '0' } });
    try {
      const res = await closed.api.post('/v1/auth/signup', { body: { email: 'someone@example.com', password: 'long enough password' } });
      expect(res.status).toBe(403);
      expect(res.body.detail.error).toBe('signup_disabled');
      expect(await closed.runtime.db.selectFrom('users').select('id').execute()).toEqual([]);
    } finally {
      await closed.close();
    }
  });
});

describe('sign-in', () => {
  it('answers the user, every workspace and a new session; wrong password and unknown email alike', async () => {
    const ada = await signUpUser(stack);
    const res = await stack.api.post('/v1/auth/login', { body: { email: ada.email.toUpperCase(), password: ada.password } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      user: { id: ada.userId, email: ada.email, display_name: null, avatar_url: null, two_factor_enabled: false },
      workspaces: [{ id: ada.personalWorkspaceId, name: expect.any(String), kind: 'personal', role: 'owner', require_two_factor: false }],
      default_workspace_id: null,
      csrf_token: expect.any(String),
    });
    expect(cookieFrom(res)).not.toBe(ada.cookie);

    const time = async (email: string, password: string) => {
      const started = performance.now();
      const r = await stack.api.post('/v1/auth/login', { body: { email, password } });
      return { ms: performance.now() - started, status: r.status, body: r.body, cookie: r.headers['set-cookie'] };
    };
    const wrong: Awaited<ReturnType<typeof time>>[] = [];
    const unknown: Awaited<ReturnType<typeof time>>[] = [];
    for (let i = 0; i < 4; i++) {
      wrong.push(await time(ada.email, `not the password ${i}`));
      unknown.push(await time(`nobody${i}@example.com`, `not the password ${i}`));
    }
    for (const r of [...wrong, ...unknown]) {
      expect(r.status).toBe(401);
      expect(r.body.detail).toEqual({ error: 'invalid_credentials', message: wrong[0].body.detail.message });
      expect(r.cookie).toBeUndefined();
    }
    // Both run one argon2id check: an unknown email is not answered noticeably faster (the
    // leak this guards against). The other direction is not a leak, and the first unknown email
    // of a process also hashes the stand-in password, so only this side is checked.
    const median = (xs: { ms: number }[]) => xs.map((x) => x.ms).sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    expect(median(unknown)).toBeGreaterThan(median(wrong) * 0.5);
  });
});

describe('sessions', () => {
  it('GET /v1/auth/session: user, workspaces, csrf_token, expires_at 7 days ahead; 401 without a session', async () => {
    const ada = await signUpUser(stack, { displayName: 'Ada' });
    const res = await stack.api.get('/v1/auth/session', { headers: ada.read() });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      user: { id: ada.userId, email: ada.email, display_name: 'Ada', avatar_url: null, two_factor_enabled: false },
      workspaces: [{ id: ada.personalWorkspaceId, name: expect.any(String), kind: 'personal', role: 'owner', require_two_factor: false }],
      default_workspace_id: null,
      csrf_token: ada.csrf,
      expires_at: expect.any(String),
    });
    const expires = Date.parse(res.body.expires_at);
    expect(Math.abs(expires - (Date.now() + 7 * 86_400_000))).toBeLessThan(120_000);
    const none = await stack.api.get('/v1/auth/session');
    expect(none.status).toBe(401);
    expect(none.body.detail.error).toBe('missing_authentication');
    const bogus = await stack.api.get('/v1/auth/session', { headers: { Cookie: 'sdx_session=not-a-session' } });
    expect(bogus.status).toBe(401);
    expect(bogus.body.detail.error).toBe('missing_authentication');
  });

  it('expires 7 days after its last use and 30 days after sign-in', async () => {
    const idle = await signUpUser(stack);
    const old = await signUpUser(stack);
    expect((await stack.api.get('/v1/account', { headers: idle.read() })).status).toBe(200);
    await sql`update sessions set last_seen_at = now() - interval '7 days 1 minute' where token_hash = ${sha256(tokenOf(idle))}`.execute(
      stack.runtime.db,
    );
    await sql`update sessions set created_at = now() - interval '30 days', expires_at = now() - interval '1 second' where token_hash = ${sha256(tokenOf(old))}`.execute(
      stack.runtime.db,
    );
    for (const user of [idle, old]) {
      const res = await stack.api.get('/v1/account', { headers: user.read() });
      expect(res.status).toBe(401);
      expect(res.body.detail.error).toBe('missing_authentication');
    }
  });

  it('records use at most once a minute, which moves the idle expiry', async () => {
    const ada = await signUpUser(stack);
    await sql`update sessions set last_seen_at = now() - interval '6 days' where token_hash = ${sha256(tokenOf(ada))}`.execute(
      stack.runtime.db,
    );
    expect((await stack.api.get('/v1/account', { headers: ada.read() })).status).toBe(200);
    const seen = async () =>
      (
        await stack.runtime.db
          .selectFrom('sessions')
          .select('last_seen_at')
          .where('token_hash', '=', sha256(tokenOf(ada)))
          .executeTakeFirstOrThrow()
      ).last_seen_at;
    const deadline = Date.now() + 5000;
    while (Date.now() - (await seen()).getTime() > 60_000 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(Date.now() - (await seen()).getTime()).toBeLessThan(60_000);
  });

  it('logout ends the session at once, on every API process, and clears the cookie; it needs the CSRF token', async () => {
    const ada = await signUpUser(stack);
    const other: Runtime = createRuntime(stack.config, { name: 'second-api', log: stack.runtime.log, providers: [] });
    const secondApp = createApp({
      services: other.services,
      registry: other.registry,
      limiter: new RedisRateLimiter(other.redis, stack.config.redisPrefix),
      redis: other.redis,
    });
    const { default: request } = await import('supertest');
    try {
      await untilRedisReady(other);
      expect((await request(secondApp).get('/v1/account').set(ada.read())).status).toBe(200);
      const noCsrf = await stack.api.post('/v1/auth/logout', { headers: ada.read() });
      expect(noCsrf.status).toBe(403);
      expect(noCsrf.body.detail.error).toBe('csrf_failed');
      const res = await stack.api.post('/v1/auth/logout', { headers: ada.write() });
      expect(res.status).toBe(204);
      expect(String(res.headers['set-cookie'])).toMatch(/sdx_session=;.*Expires=Thu, 01 Jan 1970/);
      const after = await request(secondApp).get('/v1/account').set(ada.read());
      expect(after.status).toBe(401);
      expect(after.body.detail.error).toBe('missing_authentication');
      expect((await stack.api.get('/v1/account', { headers: ada.read() })).status).toBe(401);
    } finally {
      await other.close();
    }
  });

  it('a password change needs the current password and ends every other session of the user', async () => {
    const ada = await signUpUser(stack);
    const laptop = await logInUser(stack, ada.email, ada.password);
    const wrong = await stack.api.post('/v1/auth/password', {
      headers: ada.write(),
      body: { current_password: 'not my password', new_password: 'a brand new password' },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.detail.error).toBe('invalid_credentials');
    const short = await stack.api.post('/v1/auth/password', {
      headers: ada.write(),
      body: { current_password: ada.password, new_password: 'short' },
    });
    expect(short.status).toBe(422);
    const res = await stack.api.post('/v1/auth/password', {
      headers: ada.write(),
      body: { current_password: ada.password, new_password: 'a brand new password' },
    });
    expect(res.status).toBe(204);
    expect((await stack.api.get('/v1/auth/session', { headers: ada.read() })).status).toBe(200);
    expect((await stack.api.get('/v1/auth/session', { headers: laptop.read() })).status).toBe(401);
    expect((await stack.api.post('/v1/auth/login', { body: { email: ada.email, password: ada.password } })).status).toBe(401);
    expect((await stack.api.post('/v1/auth/login', { body: { email: ada.email, password: 'a brand new password' } })).status).toBe(200);
  });
});

describe('cookie callers', () => {
  it('need X-CSRF-Token equal to the session csrf_token on writes; API keys need none', async () => {
    const ada = await signUpUser(stack);
    const body = { platform: 'instagram', operation: 'profile', target: 'natgeo' };
    for (const headers of [ada.read(), { ...ada.read(), 'X-CSRF-Token': 'wrong' }, { ...ada.read(), 'X-CSRF-Token': '' }]) {
      const res = await stack.api.post('/v1/jobs', { headers, body });
      expect(res.status).toBe(403);
      expect(res.body.detail.error).toBe('csrf_failed');
    }
    expect(await stack.runtime.db.selectFrom('jobs').select('id').where('workspace_id', '=', ada.personalWorkspaceId).execute()).toEqual(
      [],
    );
    expect((await stack.api.post('/v1/jobs', { headers: ada.write(), body })).status).toBe(202);
    // GET needs none.
    expect((await stack.api.get('/v1/jobs', { headers: ada.read() })).status).toBe(200);
    const ws = await stack.workspace();
    expect((await stack.api.post('/v1/jobs', { headers: ws.auth, body })).status).toBe(202);
  });

  it('choose the workspace with X-Workspace-ID (default: personal); GET /v1/account reports the session', async () => {
    const ada = await signUpUser(stack, { displayName: 'Ada' });
    const team = (await stack.api.post('/v1/workspaces', { headers: ada.write(), body: { name: 'Ada team' } })).body;
    const personal = await stack.api.get('/v1/account', { headers: ada.read() });
    expect(personal.body).toMatchObject({
      organization_id: ada.personalWorkspaceId,
      auth_type: 'session',
      authenticated_key_id: null,
      role: 'owner',
      user: { id: ada.userId, email: ada.email, display_name: 'Ada', avatar_url: null, two_factor_enabled: false },
    });
    expect(personal.body.workspaces).toEqual([
      { id: ada.personalWorkspaceId, name: expect.any(String), kind: 'personal', role: 'owner', require_two_factor: false },
      { id: team.id, name: 'Ada team', kind: 'team', role: 'owner', require_two_factor: false },
    ]);
    const inTeam = await stack.api.get('/v1/account', { headers: ada.read(team.id) });
    expect(inTeam.body).toMatchObject({ organization_id: team.id, organization_name: 'Ada team', auth_type: 'session', role: 'owner' });

    const stranger = await stack.workspace();
    const forbidden = await stack.api.get('/v1/account', { headers: ada.read(stranger.workspaceId) });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.detail.error).toBe('workspace_forbidden');
    const unknown = await stack.api.get('/v1/jobs', { headers: ada.read('ws_doesnotexist') });
    expect(unknown.status).toBe(403);
    expect(unknown.body.detail.error).toBe('workspace_forbidden');
  });

  it('lose to an API key sent with them: the key decides', async () => {
    const ada = await signUpUser(stack);
    const ws = await stack.workspace();
    const both = await stack.api.get('/v1/account', { headers: { ...ada.read(), ...ws.auth } });
    expect(both.body).toMatchObject({ organization_id: ws.workspaceId, auth_type: 'api_key', authenticated_key_id: ws.keyId, user: null });
    // A key write with a cookie needs no CSRF token; a bad key is not rescued by the cookie.
    expect(
      (await stack.api.post('/v1/jobs', { headers: { ...ada.read(), ...ws.auth }, body: { operation: 'profile', target: 'nasa' } })).status,
    ).toBe(202);
    const badKey = await stack.api.get('/v1/account', {
      headers: { ...ada.read(), 'X-API-Key': 'sdx_live_doesnotexist0000000000000000000000' },
    });
    expect(badKey.status).toBe(401);
    expect(badKey.body.detail.error).toBe('invalid_api_key');
  });

  it('keys and sessions do not end each other', async () => {
    const ada = await signUpUser(stack);
    const created = await stack.api.post('/v1/keys', { headers: ada.write(), body: { name: 'mine' } });
    expect(created.status).toBe(201);
    const key = { 'X-API-Key': created.body.api_key };
    expect((await stack.api.get('/v1/account', { headers: ada.read() })).status).toBe(200);
    expect((await stack.api.delete(`/v1/keys/${created.body.id}`, { headers: ada.write() })).status).toBe(204);
    expect((await stack.api.get('/v1/account', { headers: ada.read() })).status).toBe(200);

    const second = await stack.api.post('/v1/keys', { headers: ada.write(), body: { name: 'second' } });
    expect((await stack.api.post('/v1/auth/logout', { headers: ada.write() })).status).toBe(204);
    expect((await stack.api.get('/v1/account', { headers: { 'X-API-Key': second.body.api_key } })).status).toBe(200);
    expect((await stack.api.get('/v1/account', { headers: key })).status).toBe(401);
  });
});
