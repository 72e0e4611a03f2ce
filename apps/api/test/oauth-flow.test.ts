import { createHash, randomBytes } from 'node:crypto';
import request from 'supertest';
import { sql } from 'kysely';
import { addMember } from '@sdx/domain/testing';
import { createResponseValidator, signUpUser, startTestStack, type SessionUser, type TestStack } from '@sdx/testing';

/**
 * OAuth 2.1 for remote agents (extensions-2.md 3), end to end over HTTP: metadata, dynamic
 * registration, the authorization redirect to the console's consent page, consent through the
 * API with a signed-in session, the code exchanged with PKCE, the access token used as a key
 * of the chosen workspace and role, refresh rotation and reuse detection, the grant listed and
 * revoked as a key of kind oauth, its audit events, and expiry. Every answer is checked
 * against openapi.yaml.
 */
let stack: TestStack;
let appUrl: string;
let owner: SessionUser;
let teamId: string;
/** The client most tests consent to (registrations are limited to 20 an hour per address). */
let shared: { client_id: string; client_name: string };
const validator = createResponseValidator();
const REDIRECT = 'http://127.0.0.1:8765/callback';

const base64url = (buffer: Buffer) => buffer.toString('base64url');
function pkce() {
  const verifier = base64url(randomBytes(32));
  return { verifier, challenge: base64url(createHash('sha256').update(verifier).digest()) };
}

/** A raw call, checked against openapi.yaml (form bodies and redirects, which the contract client does not send or follow). */
async function raw(
  method: 'get' | 'post' | 'options',
  path: string,
  options: { form?: Record<string, string>; json?: object; headers?: Record<string, string> } = {},
) {
  let req = request(stack.app)[method](path);
  for (const [name, value] of Object.entries(options.headers ?? {})) req = req.set(name, value);
  const res = options.form ? await req.type('form').send(options.form) : options.json ? await req.send(options.json) : await req;
  if (method !== 'options') {
    const type = String(res.headers['content-type'] ?? '');
    validator.validate(
      method,
      path.split('?')[0],
      res.status,
      type.startsWith('application/json') ? res.body : undefined,
      type || undefined,
    );
  }
  return res;
}

async function register(body: Record<string, unknown> = {}) {
  const res = await raw('post', '/oauth/register', { json: { client_name: 'Test agent', redirect_uris: [REDIRECT], ...body } });
  expect(res.status).toBe(201);
  return res.body as { client_id: string; client_name: string };
}

interface Consent {
  clientId: string;
  verifier: string;
  code: string;
  keyId: string;
}

/** Registration, authorization, consent as `user` in `workspaceId` with `role`: the code, and the grant's key. */
async function consent(user: SessionUser, workspaceId: string, role: string, clientId?: string): Promise<Consent> {
  const client = clientId ?? shared.client_id;
  const { verifier, challenge } = pkce();
  const res = await stack.api.post('/v1/oauth/consent', {
    headers: user.write(),
    body: {
      client_id: client,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'st-1',
      scope: 'mcp',
      workspace_id: workspaceId,
      role,
    },
  });
  expect(res.status).toBe(200);
  expect(res.headers['cache-control']).toBe('no-store');
  const target = new URL(res.body.redirect_to);
  expect(`${target.origin}${target.pathname}`).toBe(REDIRECT);
  expect(target.searchParams.get('state')).toBe('st-1');
  const code = target.searchParams.get('code')!;
  const grant = await stack.runtime.db
    .selectFrom('oauth_codes')
    .select('key_id')
    .where('code_hash', '=', createHash('sha256').update(code).digest('hex'))
    .executeTakeFirstOrThrow();
  return { clientId: client, verifier, code, keyId: grant.key_id };
}

async function exchange(c: Consent) {
  return raw('post', '/oauth/token', {
    form: { grant_type: 'authorization_code', client_id: c.clientId, code: c.code, code_verifier: c.verifier, redirect_uri: REDIRECT },
  });
}

async function tokensFor(user: SessionUser, workspaceId: string, role: string) {
  const c = await consent(user, workspaceId, role);
  const res = await exchange(c);
  expect(res.status).toBe(200);
  return { ...c, access: res.body.access_token as string, refresh: res.body.refresh_token as string };
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

beforeAll(async () => {
  stack = await startTestStack();
  appUrl = stack.config.appUrl;
  owner = await signUpUser(stack);
  teamId = (await stack.api.post('/v1/workspaces', { headers: owner.write(), body: { name: 'Agents' } })).body.id as string;
  shared = await register();
});
afterAll(async () => {
  await stack.close();
});

describe('metadata', () => {
  it('serves protected-resource metadata (both paths) and authorization-server metadata, open to any origin', async () => {
    const resource = await raw('get', '/.well-known/oauth-protected-resource', { headers: { Origin: 'https://agent.example' } });
    expect(resource.status).toBe(200);
    expect(resource.body).toMatchObject({ resource: `${appUrl}/mcp`, authorization_servers: [appUrl] });
    expect(resource.headers['access-control-allow-origin']).toBe('*');
    const pathForm = await raw('get', '/.well-known/oauth-protected-resource/mcp');
    expect(pathForm.body).toEqual(resource.body);

    const server = await raw('get', '/.well-known/oauth-authorization-server', { headers: { Origin: 'https://agent.example' } });
    expect(server.status).toBe(200);
    expect(server.headers['access-control-allow-origin']).toBe('*');
    expect(server.body).toMatchObject({
      issuer: appUrl,
      authorization_endpoint: `${appUrl}/oauth/authorize`,
      token_endpoint: `${appUrl}/oauth/token`,
      registration_endpoint: `${appUrl}/oauth/register`,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['none'],
    });
  });

  it('lets a browser-based agent call the token endpoint (CORS preflight)', async () => {
    const res = await raw('options', '/oauth/token', {
      headers: {
        Origin: 'https://agent.example',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('*');
  });
});

describe('registration', () => {
  it('registers public clients only, with https or loopback redirect URIs', async () => {
    const client = await register({
      redirect_uris: [REDIRECT, 'http://localhost:3000/cb', 'http://[::1]:4000/cb', 'https://agent.example.com/oauth/cb'],
    });
    expect(client).toMatchObject({
      client_id: expect.stringMatching(/^oac_[0-9a-f]{32}$/),
      client_name: 'Test agent',
      token_endpoint_auth_method: 'none',
    });
    expect(client).not.toHaveProperty('client_secret');

    const asksSecret = await register({ token_endpoint_auth_method: 'client_secret_post' });
    expect(asksSecret).toMatchObject({ token_endpoint_auth_method: 'none' });
    expect(asksSecret).not.toHaveProperty('client_secret');
  });

  it.each([
    ['plain http on a public host', 'http://agent.example.com/cb', 'invalid_redirect_uri'],
    ['http on a private address', 'http://192.168.1.10/cb', 'invalid_redirect_uri'],
    ['a custom scheme', 'myapp://callback', 'invalid_redirect_uri'],
    ['a fragment', 'https://agent.example.com/cb#x', 'invalid_redirect_uri'],
    ['javascript:', 'javascript:alert(1)', expect.stringMatching(/^invalid_(redirect_uri|client_metadata)$/)],
  ])('refuses %s', async (_name, uri, error) => {
    const res = await raw('post', '/oauth/register', { json: { client_name: 'Bad', redirect_uris: [REDIRECT, uri] } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error, error_description: expect.any(String) });
    expect(await stack.runtime.db.selectFrom('oauth_clients').select('id').where('client_name', '=', 'Bad').execute()).toEqual([]);
  });
});

describe('authorization', () => {
  it('sends the browser to the console consent page with the request', async () => {
    const { client_id } = shared;
    const { challenge } = pkce();
    const query = new URLSearchParams({
      client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'abc',
      scope: 'mcp',
    });
    const res = await raw('get', `/oauth/authorize?${query.toString()}`);
    expect(res.status).toBe(302);
    const location = new URL(res.headers.location, appUrl);
    expect(location.pathname).toBe('/console/oauth/consent');
    expect(Object.fromEntries(location.searchParams)).toEqual({
      client_id,
      client_name: 'Test agent',
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'abc',
      scope: 'mcp',
    });
    // RFC 8252: a loopback redirect URI on another port is the same one.
    const otherPort = new URLSearchParams({
      client_id,
      redirect_uri: 'http://127.0.0.1:9999/callback',
      response_type: 'code',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    expect((await raw('get', `/oauth/authorize?${otherPort.toString()}`)).status).toBe(302);
  });

  it('answers an unknown client or redirect URI itself, never redirecting', async () => {
    const { client_id } = shared;
    const { challenge } = pkce();
    for (const [client, redirect] of [
      ['oac_00000000000000000000000000000000', REDIRECT],
      [client_id, 'https://attacker.example/cb'],
      [client_id, 'http://127.0.0.1:8765/other'],
    ]) {
      const query = new URLSearchParams({
        client_id: client,
        redirect_uri: redirect,
        response_type: 'code',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      const res = await raw('get', `/oauth/authorize?${query.toString()}`);
      expect({ status: res.status, location: res.headers.location, error: res.body.error }).toEqual({
        status: 400,
        location: undefined,
        error: expect.stringMatching(/^invalid_(client|request)$/),
      });
    }
  });

  it('answers plain PKCE, a missing or malformed challenge, another response type or a bad state with a 400 page, never a redirect to the client', async () => {
    // A registered https redirect URI proves nothing: anybody may register one (extensions-3.md 1).
    const registered = await raw('post', '/oauth/register', {
      json: { client_name: 'Anybody', redirect_uris: ['https://attacker.example/cb'], token_endpoint_auth_method: 'none' },
    });
    expect(registered.status).toBe(201);
    for (const [client_id, redirect_uri] of [
      [shared.client_id, REDIRECT],
      [registered.body.client_id as string, 'https://attacker.example/cb'],
    ]) {
      const good = { response_type: 'code', code_challenge: pkce().challenge, code_challenge_method: 'S256' };
      const extras: Array<Record<string, string>> = [
        { code_challenge_method: 'plain' },
        { code_challenge: '' },
        { code_challenge: 'short' },
        { response_type: 'token' },
        { state: 's'.repeat(2001) },
        { resource: 'https://elsewhere.example/mcp' },
      ];
      for (const extra of extras) {
        const query = new URLSearchParams({ client_id: client_id, redirect_uri: redirect_uri, state: 's', ...good, ...extra });
        const res = await raw('get', `/oauth/authorize?${query.toString()}`);
        expect({ status: res.status, location: res.headers.location, type: res.headers['content-type'] }).toEqual({
          status: 400,
          location: undefined,
          type: 'text/html; charset=utf-8',
        });
        expect(res.text).toContain('This sign-in request cannot be completed');
        expect(res.text).toMatch(/invalid_(request|target)/);
        expect(res.text).not.toContain('attacker.example');
        expect(res.headers['content-security-policy']).toContain("default-src 'none'");
        expect(res.headers['cache-control']).toBe('no-store');
      }
    }
    // The page escapes what the request carried.
    const query = new URLSearchParams({
      client_id: shared.client_id,
      redirect_uri: REDIRECT,
      response_type: '<script>alert(1)</script>',
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
    });
    const res = await raw('get', `/oauth/authorize?${query.toString()}`);
    expect(res.status).toBe(400);
    expect(res.text).not.toContain('<script>');
  });
});

describe('consent', () => {
  it('needs a session with its CSRF token, never a key', async () => {
    const { client_id } = shared;
    const body = {
      client_id,
      redirect_uri: REDIRECT,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
      workspace_id: teamId,
      role: 'viewer',
    };
    const noCsrf = await stack.api.post('/v1/oauth/consent', { headers: owner.read(), body });
    expect([noCsrf.status, noCsrf.body.detail.error]).toEqual([403, 'csrf_failed']);
    const key = await stack.api.post('/v1/keys', { headers: owner.write(teamId), body: { name: 'k', role: 'owner' } });
    const byKey = await stack.api.post('/v1/oauth/consent', { headers: { 'X-API-Key': key.body.api_key }, body });
    expect([byKey.status, byKey.body.detail.error, byKey.body.detail.required_auth]).toEqual([403, 'forbidden', 'session']);
    const none = await stack.api.post('/v1/oauth/consent', { body });
    expect(none.status).toBe(401);
  });

  it("refuses a role above the user's, a workspace not theirs, and a client or redirect URI it does not know", async () => {
    const member = await signUpUser(stack);
    await stack.runtime.db
      .transaction()
      .execute((tx) => addMember(tx, teamId, member.userId, 'member', { type: 'system', id: 'test', ip: null }));
    const { client_id } = shared;
    const body = {
      client_id,
      redirect_uri: REDIRECT,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
      workspace_id: teamId,
      role: 'admin',
    };
    const above = await stack.api.post('/v1/oauth/consent', { headers: member.write(), body });
    expect([above.status, above.body.detail]).toEqual([403, expect.objectContaining({ error: 'forbidden', required_role: 'admin' })]);
    const stranger = await signUpUser(stack);
    const notMine = await stack.api.post('/v1/oauth/consent', { headers: stranger.write(), body: { ...body, role: 'viewer' } });
    expect([notMine.status, notMine.body.detail.error]).toEqual([404, 'workspace_not_found']);
    const badRedirect = await stack.api.post('/v1/oauth/consent', {
      headers: owner.write(),
      body: { ...body, redirect_uri: 'https://attacker.example/cb' },
    });
    expect([badRedirect.status, badRedirect.body.detail.error]).toEqual([400, 'invalid_request']);
    const badClient = await stack.api.post('/v1/oauth/consent', { headers: owner.write(), body: { ...body, client_id: 'oac_nope' } });
    expect([badClient.status, badClient.body.detail.error]).toEqual([400, 'invalid_request']);
    const plain = await stack.api.post('/v1/oauth/consent', { headers: owner.write(), body: { ...body, code_challenge_method: 'plain' } });
    expect(plain.status).toBe(422);
    const fine = await stack.api.post('/v1/oauth/consent', { headers: member.write(), body: { ...body, role: 'member' } });
    expect(fine.status).toBe(200);
  });
});

describe('tokens', () => {
  it('exchanges the code once, with the right PKCE verifier only', async () => {
    const c = await consent(owner, teamId, 'member');
    const wrong = await raw('post', '/oauth/token', {
      form: { grant_type: 'authorization_code', client_id: c.clientId, code: c.code, code_verifier: pkce().verifier },
    });
    expect([wrong.status, wrong.body.error]).toEqual([400, 'invalid_grant']);
    const otherClient = await register({ client_name: 'Other agent' });
    const stolen = await raw('post', '/oauth/token', {
      form: { grant_type: 'authorization_code', client_id: otherClient.client_id, code: c.code, code_verifier: c.verifier },
    });
    expect([stolen.status, stolen.body.error]).toEqual([400, 'invalid_grant']);

    const res = await exchange(c);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      access_token: expect.stringMatching(/^sdx_oat_[0-9A-Za-z]{40}$/),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^sdx_ort_[0-9A-Za-z]{40}$/),
      scope: 'mcp',
    });
    const works = await stack.api.get('/v1/usage/current', { headers: bearer(res.body.access_token) });
    expect(works.status).toBe(200);

    // The same code again: refused, and the grant it made is revoked with every token.
    const again = await exchange(c);
    expect([again.status, again.body.error]).toEqual([400, 'invalid_grant']);
    const after = await stack.api.get('/v1/usage/current', { headers: bearer(res.body.access_token) });
    expect([after.status, after.body.detail.error]).toEqual([401, 'invalid_api_key']);
    const revoked = await stack.api.get('/v1/audit-events', { headers: owner.read(teamId) });
    expect(
      revoked.body.find((e: { action: string; target_id: string }) => e.action === 'api_key.revoked' && e.target_id === c.keyId),
    ).toMatchObject({
      actor: { type: 'system', id: 'oauth' },
      data: expect.objectContaining({ kind: 'oauth', reason: 'authorization_code_reused' }),
    });
  });

  it('answers RFC 6749 errors for a bad request, in JSON bodies too', async () => {
    const { client_id } = shared;
    const unsupported = await raw('post', '/oauth/token', { json: { grant_type: 'password', client_id } });
    expect([unsupported.status, unsupported.body.error]).toEqual([400, 'unsupported_grant_type']);
    const unknownClient = await raw('post', '/oauth/token', {
      form: { grant_type: 'refresh_token', client_id: 'oac_unknown', refresh_token: 'sdx_ort_x' },
    });
    expect([unknownClient.status, unknownClient.body.error]).toEqual([400, 'invalid_client']);
    const missing = await raw('post', '/oauth/token', { json: { grant_type: 'authorization_code', client_id } });
    expect([missing.status, missing.body.error]).toEqual([400, 'invalid_request']);
    const malformed = await request(stack.app).post('/oauth/token').set('Content-Type', 'application/json').send('{"grant_type":');
    expect([malformed.status, malformed.body.error]).toEqual([400, 'invalid_request']);
  });

  it('acts as a key of the chosen workspace and role, with Bearer or X-API-Key', async () => {
    const t = await tokensFor(owner, teamId, 'viewer');
    const account = await stack.api.get('/v1/account', { headers: bearer(t.access) });
    expect(account.body).toMatchObject({ organization_id: teamId, authenticated_key_id: t.keyId, role: 'viewer', auth_type: 'api_key' });
    expect((await stack.api.get('/v1/jobs', { headers: { 'X-API-Key': t.access } })).status).toBe(200);
    const write = await stack.api.post('/v1/jobs', { headers: bearer(t.access), body: { operation: 'profile', target: 'nasa' } });
    expect([write.status, write.body.detail]).toEqual([403, expect.objectContaining({ error: 'forbidden', required_role: 'member' })]);
    const elsewhere = await stack.api.get('/v1/usage/current', {
      headers: { ...bearer(t.access), 'X-Workspace-ID': owner.personalWorkspaceId },
    });
    expect([elsewhere.status, elsewhere.body.detail.error]).toEqual([403, 'workspace_forbidden']);
    // A refresh token is not an access token.
    expect((await stack.api.get('/v1/usage/current', { headers: bearer(t.refresh) })).status).toBe(401);
  });

  it('rotates refresh tokens; a used one presented again revokes the grant', async () => {
    const t = await tokensFor(owner, teamId, 'member');
    const first = await raw('post', '/oauth/token', {
      json: { grant_type: 'refresh_token', client_id: t.clientId, refresh_token: t.refresh },
    });
    expect(first.status).toBe(200);
    expect(first.body.refresh_token).not.toBe(t.refresh);
    const second = await raw('post', '/oauth/token', {
      form: { grant_type: 'refresh_token', client_id: t.clientId, refresh_token: first.body.refresh_token },
    });
    expect(second.status).toBe(200);
    expect((await stack.api.get('/v1/usage/current', { headers: bearer(second.body.access_token) })).status).toBe(200);
    const wider = await raw('post', '/oauth/token', {
      form: { grant_type: 'refresh_token', client_id: t.clientId, refresh_token: second.body.refresh_token, scope: 'mcp admin' },
    });
    expect([wider.status, wider.body.error]).toEqual([400, 'invalid_scope']);

    // The first refresh token again: someone else holds it. Refused, and the whole grant ends.
    const reused = await raw('post', '/oauth/token', {
      form: { grant_type: 'refresh_token', client_id: t.clientId, refresh_token: t.refresh },
    });
    expect([reused.status, reused.body.error]).toEqual([400, 'invalid_grant']);
    expect((await stack.api.get('/v1/usage/current', { headers: bearer(second.body.access_token) })).status).toBe(401);
    const latest = await raw('post', '/oauth/token', {
      form: { grant_type: 'refresh_token', client_id: t.clientId, refresh_token: second.body.refresh_token },
    });
    expect([latest.status, latest.body.error]).toEqual([400, 'invalid_grant']);
    const key = await stack.runtime.db.selectFrom('api_keys').select('revoked_at').where('id', '=', t.keyId).executeTakeFirstOrThrow();
    expect(key.revoked_at).not.toBeNull();
    const events = await stack.api.get('/v1/audit-events', { headers: owner.read(teamId) });
    expect(
      events.body.find((e: { action: string; target_id: string }) => e.action === 'api_key.revoked' && e.target_id === t.keyId).data,
    ).toMatchObject({ reason: 'refresh_token_reused' });
  });

  it('stops an access token after its hour', async () => {
    const t = await tokensFor(owner, teamId, 'viewer');
    const row = await stack.runtime.db
      .selectFrom('oauth_tokens')
      .select(['created_at', 'expires_at'])
      .where('key_id', '=', t.keyId)
      .where('kind', '=', 'access')
      .executeTakeFirstOrThrow();
    expect(row.expires_at.getTime() - row.created_at.getTime()).toBe(3600_000);
    expect((await stack.api.get('/v1/usage/current', { headers: bearer(t.access) })).status).toBe(200);
    await sql`update oauth_tokens set expires_at = now() - interval '1 second' where key_id = ${t.keyId} and kind = 'access'`.execute(
      stack.runtime.db,
    );
    const expired = await stack.api.get('/v1/usage/current', { headers: bearer(t.access) });
    expect([expired.status, expired.body.detail.error]).toEqual([401, 'invalid_api_key']);
    // The refresh token still gives a new hour.
    const refreshed = await raw('post', '/oauth/token', {
      form: { grant_type: 'refresh_token', client_id: t.clientId, refresh_token: t.refresh },
    });
    expect((await stack.api.get('/v1/usage/current', { headers: bearer(refreshed.body.access_token) })).status).toBe(200);
  });
});

describe('the grant as a key', () => {
  it('is listed as kind oauth, audited, and revoked by DELETE /v1/keys/{key_id}', async () => {
    const t = await tokensFor(owner, teamId, 'member');
    const keys = await stack.api.get('/v1/keys', { headers: owner.read(teamId) });
    expect(keys.body.find((k: { id: string }) => k.id === t.keyId)).toMatchObject({
      kind: 'oauth',
      name: 'Test agent',
      role: 'member',
      created_by: owner.userId,
      expires_at: null,
      revoked_at: null,
      prefix: expect.stringMatching(/^sdx_oat_/),
    });
    expect(keys.body.filter((k: { kind: string }) => k.kind === 'api_key').length).toBeGreaterThan(0);
    const created = (await stack.api.get('/v1/audit-events', { headers: owner.read(teamId) })).body.find(
      (e: { action: string; target_id: string }) => e.action === 'api_key.created' && e.target_id === t.keyId,
    );
    expect(created).toMatchObject({
      actor: { type: 'user', id: owner.userId },
      data: expect.objectContaining({ kind: 'oauth', role: 'member', client_id: t.clientId, client_name: 'Test agent' }),
    });

    const deleted = await stack.api.delete(`/v1/keys/${t.keyId}`, { headers: owner.write(teamId) });
    expect(deleted.status).toBe(204);
    expect((await stack.api.get('/v1/usage/current', { headers: bearer(t.access) })).status).toBe(401);
    const refresh = await raw('post', '/oauth/token', {
      form: { grant_type: 'refresh_token', client_id: t.clientId, refresh_token: t.refresh },
    });
    expect([refresh.status, refresh.body.error]).toEqual([400, 'invalid_grant']);
    const revoked = (await stack.api.get('/v1/audit-events', { headers: owner.read(teamId) })).body.find(
      (e: { action: string; target_id: string }) => e.action === 'api_key.revoked' && e.target_id === t.keyId,
    );
    expect(revoked).toMatchObject({ actor: { type: 'user', id: owner.userId }, data: expect.objectContaining({ kind: 'oauth' }) });
  });

  it('expires with its code when the agent never exchanges it', async () => {
    const c = await consent(owner, teamId, 'viewer');
    const key = (await stack.api.get('/v1/keys', { headers: owner.read(teamId) })).body.find((k: { id: string }) => k.id === c.keyId);
    const left = new Date(key.expires_at).getTime() - Date.now();
    expect(left).toBeGreaterThan(9 * 60_000);
    expect(left).toBeLessThanOrEqual(10 * 60_000);
    await sql`update oauth_codes set expires_at = now() - interval '1 second' where key_id = ${c.keyId}`.execute(stack.runtime.db);
    const late = await exchange(c);
    expect([late.status, late.body.error]).toEqual([400, 'invalid_grant']);
  });

  it('follows its user out of the workspace', async () => {
    const member = await signUpUser(stack);
    await stack.runtime.db
      .transaction()
      .execute((tx) => addMember(tx, teamId, member.userId, 'admin', { type: 'system', id: 'test', ip: null }));
    const t = await tokensFor(member, teamId, 'admin');
    expect((await stack.api.get('/v1/usage/current', { headers: bearer(t.access) })).status).toBe(200);
    const removed = await stack.api.delete(`/v1/workspaces/${teamId}/members/${member.userId}`, { headers: owner.write(teamId) });
    expect(removed.status).toBe(204);
    expect((await stack.api.get('/v1/usage/current', { headers: bearer(t.access) })).status).toBe(401);
  });

  it('is revoked by the client through /oauth/revoke (RFC 7009)', async () => {
    const t = await tokensFor(owner, teamId, 'viewer');
    const access = await raw('post', '/oauth/revoke', {
      form: { client_id: t.clientId, token: t.access, token_type_hint: 'access_token' },
    });
    expect(access.status).toBe(200);
    expect((await stack.api.get('/v1/usage/current', { headers: bearer(t.access) })).status).toBe(401);
    const refreshed = await raw('post', '/oauth/token', {
      form: { grant_type: 'refresh_token', client_id: t.clientId, refresh_token: t.refresh },
    });
    expect(refreshed.status).toBe(200);
    const whole = await raw('post', '/oauth/revoke', { json: { client_id: t.clientId, token: refreshed.body.refresh_token } });
    expect(whole.status).toBe(200);
    expect((await stack.api.get('/v1/usage/current', { headers: bearer(refreshed.body.access_token) })).status).toBe(401);
    expect((await raw('post', '/oauth/revoke', { form: { client_id: t.clientId, token: 'sdx_ort_unknown' } })).status).toBe(200);
  });
});

describe('limits', () => {
  it('limits registrations per client address over Redis (the SDK in-memory limiter is off)', async () => {
    let refused: request.Response | null = null;
    for (let i = 0; i < 25 && !refused; i++) {
      const res = await raw('post', '/oauth/register', { json: { client_name: `Many ${i}`, redirect_uris: [REDIRECT] } });
      if (res.status === 429) refused = res;
      else expect(res.status).toBe(201);
    }
    expect(refused?.body).toEqual({ error: 'too_many_requests', error_description: expect.stringContaining('register') });
    expect(Number(refused?.headers['retry-after'])).toBeGreaterThan(0);
    const registered = await stack.runtime.db
      .selectFrom('oauth_clients')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    // Refused registrations count too: 20 attempts an hour in all.
    expect(Number(registered.n)).toBeGreaterThan(0);
    expect(Number(registered.n)).toBeLessThanOrEqual(20);
  });
});
