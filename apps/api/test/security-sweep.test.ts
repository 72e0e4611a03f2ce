import { createHash, randomBytes } from 'node:crypto';
import request from 'supertest';
import type { OpenAPIV3 } from 'express-openapi-validator/dist/framework/types';
import { sql } from 'kysely';
import { type Access, contractOperations, labelOf, type OperationId, route as declareRoute, ROUTES } from '@sdx/app-api';
import { loadOpenApiDocument } from '@sdx/contract';
import { addMember, createApiKey, newId, type Role, ROLES, sealerOf } from '@sdx/domain/testing';
import { grantWorkspaceCredits, signUpUser, startTestStack, type SessionUser, type TestStack } from '@sdx/testing';

/**
 * The security sweep, generated from the route table and the access declared for each route:
 * every authenticated route is called with no credentials, a revoked key, an expired key, an
 * expired session, a cookie write without CSRF token, each role below the one it declares (as
 * a session and as a key), another workspace chosen by X-Workspace-ID, and each path ID swapped
 * for one of another workspace. A new route is covered as soon as it is in the table.
 */
let stack: TestStack;

type Headers = Record<string, string>;
interface Fixture {
  ids: Record<string, string>;
}

const document = loadOpenApiDocument();
const templateOf = (path: string) => path.replace(/:([a-z_]+)/g, '{$1}');

type Operation = OpenAPIV3.OperationObject & { 'x-required-access'?: string };
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** The openapi.yaml operation of a route, when it is documented. */
function operationOf(method: string, path: string): Operation | undefined {
  const item: OpenAPIV3.PathItemObject | undefined = document.paths[templateOf(path)];
  const key = METHODS.find((m) => m === method);
  return key && item?.[key];
}

function isRef(node: unknown): node is OpenAPIV3.ReferenceObject {
  return node !== null && typeof node === 'object' && '$ref' in node && typeof node.$ref === 'string';
}

/** A request body as declared, or the components/requestBodies entry it names. */
function resolveRef<T extends object>(node: T | OpenAPIV3.ReferenceObject | undefined): T | undefined {
  if (!isRef(node)) return node;
  const target = node.$ref
    .slice(2)
    .split('/')
    .reduce<unknown>((n, key) => (n !== null && typeof n === 'object' ? (n as Record<string, unknown>)[key] : undefined), document);
  return resolveRef(target as T | OpenAPIV3.ReferenceObject | undefined);
}

/** Request bodies of routes whose openapi.yaml operation carries no example. */
const FALLBACK_BODIES: Record<string, unknown> = {};

/** The body a call sends: the operation's example. Only calls that get past authentication need it (strict). */
function bodyFor(method: string, path: string, strict: boolean): unknown {
  const requestBody = resolveRef(operationOf(method, path)?.requestBody);
  if (!requestBody) return undefined;
  const media = requestBody.content?.['application/json'];
  const example = media?.example ?? (Object.values(media?.examples ?? {})[0] as { value?: unknown } | undefined)?.value;
  if (example !== undefined) return example;
  const fallback = FALLBACK_BODIES[`${method.toUpperCase()} ${path}`];
  if (fallback === undefined && requestBody.required && strict)
    throw new Error(`${method.toUpperCase()} ${path}: add a request example to openapi.yaml`);
  return fallback;
}

const scheduleBody = () => ({
  name: 'sweep',
  operation: 'profile',
  targets: ['nasa'],
  frequency: 'daily',
  timezone: 'UTC',
  starts_at: new Date(Date.now() + 86_400_000).toISOString(),
});
FALLBACK_BODIES['PUT /v1/schedules/:schedule_id'] = scheduleBody();

let a: Fixture;
let b: Fixture;
let owner: SessionUser;
const sessions = {} as Record<Role, SessionUser>;
const keys = {} as Record<Role, Headers>;
let revokedKey: Headers;
let expiredKey: Headers;
let expiredSession: SessionUser;

/** A team workspace with one of each resource a path can name, made over HTTP by its owner. */
async function workspaceWithResources(user: SessionUser, name: string): Promise<Fixture & { workspaceId: string }> {
  const team = await stack.api.post('/v1/workspaces', { headers: user.write(), body: { name } });
  const workspaceId = team.body.id as string;
  // A team workspace starts without credits (NEW_TEAM_WORKSPACE_CREDITS 0): grant what its job and batch reserve.
  await grantWorkspaceCredits(stack, workspaceId, 10_000);
  await sql`update workspaces set rate_limit_per_minute = 100000 where id = ${workspaceId}`.execute(stack.runtime.db);
  const h = user.write(workspaceId);
  const job = await stack.api.post('/v1/jobs', { headers: h, body: { operation: 'profile', target: `${name}_job` } });
  const batch = await stack.api.post('/v1/batches', { headers: h, body: { operation: 'profile', targets: [`${name}_1`, `${name}_2`] } });
  const schedule = await stack.api.post('/v1/schedules', { headers: h, body: scheduleBody() });
  const monitor = await stack.api.post('/v1/monitors', {
    headers: h,
    body: { name: 'sweep', operation: 'profile', targets: ['nasa'], frequency: 'daily' },
  });
  const key = await stack.api.post('/v1/keys', { headers: h, body: { name: 'sweep' } });
  const invitation = await stack.api.post(`/v1/workspaces/${workspaceId}/invitations`, {
    headers: h,
    body: { email: `invitee.${name}@example.com`, role: 'member' },
  });
  // Port 9 (discard) on loopback: nothing listens, and no worker runs here to send anything.
  const webhook = await stack.api.post('/v1/webhooks', { headers: h, body: { url: 'http://127.0.0.1:9/hook', events: ['*'] } });
  const delivery = await stack.api.post(`/v1/webhooks/${webhook.body.id}/test`, { headers: h });
  // A destination's creation writes to its bucket, which the sweep has none of: its row is stored as creation stores it.
  const destination = await stack.runtime.db
    .insertInto('destinations')
    .values({
      id: newId('dst'),
      workspace_id: workspaceId,
      name,
      type: 's3',
      bucket: 'sweep',
      region: 'us-east-1',
      endpoint: null,
      access_key_id: 'AKIA',
      secret_access_key: sealerOf(stack.config).seal('secret'),
      format: 'ndjson',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const member = await signUpUser(stack);
  await stack.runtime.db
    .transaction()
    .execute((tx) => addMember(tx, workspaceId, member.userId, 'member', { type: 'system', id: 'test', ip: null }));
  for (const res of [job, batch, schedule, monitor, key, invitation, webhook, delivery]) expect(res.status).toBeLessThan(300);
  return {
    workspaceId,
    ids: {
      workspace_id: workspaceId,
      job_id: job.body.id,
      batch_id: batch.body.id,
      schedule_id: schedule.body.id,
      monitor_id: monitor.body.id,
      key_id: key.body.id,
      invitation_id: invitation.body.id,
      user_id: member.userId,
      webhook_id: webhook.body.id,
      delivery_id: delivery.body.id,
      destination_id: destination.id,
    },
  };
}

beforeAll(async () => {
  stack = await startTestStack({ env: { WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1' } });
  owner = await signUpUser(stack);
  const fixtureA = await workspaceWithResources(owner, 'alpha');
  a = fixtureA;
  b = await workspaceWithResources(await signUpUser(stack), 'beta');
  const workspaceId = fixtureA.workspaceId;
  sessions.owner = owner;
  for (const role of ROLES) {
    if (role !== 'owner') {
      const user = await signUpUser(stack);
      await stack.runtime.db
        .transaction()
        .execute((tx) => addMember(tx, workspaceId, user.userId, role, { type: 'system', id: 'test', ip: null }));
      sessions[role] = user;
    }
    keys[role] = { 'X-API-Key': (await createApiKey(stack.runtime.db, workspaceId, `${role} key`, { role })).api_key };
  }
  const revoked = await createApiKey(stack.runtime.db, workspaceId, 'revoked');
  await stack.api.delete(`/v1/keys/${revoked.key_id}`, { headers: owner.write(workspaceId) });
  revokedKey = { 'X-API-Key': revoked.api_key };
  const expired = await createApiKey(stack.runtime.db, workspaceId, 'expired', { expiresAt: new Date(Date.now() + 60_000) });
  await sql`update api_keys set expires_at = now() - interval '1 second' where id = ${expired.key_id}`.execute(stack.runtime.db);
  expiredKey = { 'X-API-Key': expired.api_key };
  expiredSession = await signUpUser(stack);
  await stack.runtime.db
    .transaction()
    .execute((tx) => addMember(tx, workspaceId, expiredSession.userId, 'owner', { type: 'system', id: 'test', ip: null }));
  await sql`update sessions set expires_at = now() - interval '1 second' where user_id = ${expiredSession.userId}`.execute(
    stack.runtime.db,
  );
});

afterAll(async () => {
  await stack.close();
});

/** The /v1 routes (OAuth's protocol endpoints and /mcp have their own section below). */
const authenticated = ROUTES.filter((route) => (route.reads === 'json' || route.reads === 'raw') && route.access !== 'public');
const OAUTH_ROUTES = ROUTES.filter((route) => route.reads === 'oauth');
const label = labelOf;
const pathWith = (path: string, ids: Record<string, string>, foreign: Record<string, string> = {}) =>
  path.replace(/:([a-z_]+)/g, (_m, name: string) => {
    const id = foreign[name] ?? ids[name];
    if (!id) throw new Error(`the sweep has no resource for :${name}; add one to workspaceWithResources`);
    return id;
  });
const below = (access: Access): Role[] => (access === 'public' || access === 'session' ? [] : ROLES.slice(0, ROLES.indexOf(access)));

function call(route: (typeof ROUTES)[number], headers: Headers, path = pathWith(route.path, a.ids), strict = false) {
  return stack.api.call(route.method, path, { headers, body: bodyFor(route.method, route.path, strict) });
}

describe('the route table', () => {
  it('has one route per operation of openapi.yaml, at its method and path', () => {
    const operations = contractOperations();
    expect(ROUTES.map((route) => route.operationId).sort()).toEqual([...operations.keys()].sort());
    for (const route of ROUTES)
      expect({ id: route.operationId, at: label(route) }).toEqual({ id: route.operationId, at: label(operations.get(route.operationId)!) });
  });

  it('refuses to declare a route without an access, or for an operation openapi.yaml does not have', () => {
    const handler = () => undefined;
    expect(() => declareRoute('getJob', { handler } as never)).toThrow(/GET \/v1\/jobs\/:job_id \(getJob\) declares no access/);
    expect(() => declareRoute('getJob', { access: 'everyone', handler } as never)).toThrow(/declares no access/);
    expect(() => declareRoute('undeclaredOperation' as OperationId, { access: 'viewer', handler })).toThrow(
      /undeclaredOperation: not an operation of openapi.yaml/,
    );
  });

  it('agrees with the access openapi.yaml documents (x-required-access)', () => {
    for (const route of ROUTES) {
      const operation = operationOf(route.method, route.path);
      expect({ route: label(route), documented: Boolean(operation) }).toEqual({ route: label(route), documented: true });
      if (operation?.['x-required-access'])
        expect({ route: label(route), access: operation['x-required-access'] }).toEqual({ route: label(route), access: route.access });
    }
  });
});

describe.each(authenticated.map((route) => [label(route), route] as const))('%s', (_name, route) => {
  const access = route.access;
  const isWrite = route.method !== 'get';

  it('refuses missing, revoked and expired credentials', async () => {
    const cases: Array<[Headers, number, string]> = [
      [{}, 401, 'missing_authentication'],
      [revokedKey, 401, 'invalid_api_key'],
      [expiredKey, 401, 'invalid_api_key'],
      [expiredSession.write(), 401, 'missing_authentication'],
    ];
    for (const [headers, status, error] of cases) {
      const res = await call(route, headers);
      expect({ headers: Object.keys(headers), status: res.status, error: res.body?.detail?.error }).toEqual({
        headers: Object.keys(headers),
        status,
        error,
      });
    }
  });

  if (isWrite)
    it('refuses a cookie write without the CSRF token', async () => {
      const res = await call(route, owner.read(a.ids.workspace_id));
      expect([res.status, res.body.detail.error]).toEqual([403, 'csrf_failed']);
    });

  if (below(access).length > 0)
    it(`refuses each role below ${access}, as a session and as a key`, async () => {
      for (const role of below(access)) {
        for (const [kind, headers] of [
          ['session', sessions[role].write(a.ids.workspace_id)],
          ['key', keys[role]],
        ] as const) {
          const res = await call(route, headers);
          expect({ role, kind, status: res.status, detail: res.body.detail }).toEqual({
            role,
            kind,
            status: 403,
            detail: expect.objectContaining({ error: 'forbidden', required_role: access }),
          });
        }
      }
    });

  if (access === 'session')
    it('refuses an API key', async () => {
      const res = await call(route, keys.owner);
      expect([res.status, res.body.detail.error, res.body.detail.required_auth]).toEqual([403, 'forbidden', 'session']);
    });

  if (!route.path.includes(':workspace_id'))
    it('refuses another workspace chosen by X-Workspace-ID', async () => {
      for (const headers of [owner.write(b.ids.workspace_id), { ...keys.owner, 'X-Workspace-ID': b.ids.workspace_id }]) {
        const res = await call(route, headers);
        expect([res.status, res.body.detail.error]).toEqual([403, 'workspace_forbidden']);
      }
    });

  const params = [...route.path.matchAll(/:([a-z_]+)/g)].map((m) => m[1]);
  if (params.length > 0)
    it(`answers 404 for another workspace's ${params.join(', ')}`, async () => {
      const callers: Array<[string, Headers]> =
        access === 'session'
          ? [['session', owner.write(a.ids.workspace_id)]]
          : [
              ['session', owner.write(a.ids.workspace_id)],
              ['key', keys.owner],
            ];
      for (const param of params) {
        for (const [kind, headers] of callers) {
          const res = await call(route, headers, pathWith(route.path, a.ids, { [param]: b.ids[param] }), true);
          expect({ param, kind, status: res.status, error: res.body.detail?.error }).toEqual({
            param,
            kind,
            status: 404,
            error: expect.stringMatching(/_not_found$/),
          });
        }
      }
    });
});

it('changed nothing in the other workspace', async () => {
  const beta = b.ids;
  const job = await stack.runtime.db
    .selectFrom('jobs')
    .select(['status', 'cancel_requested_at'])
    .where('id', '=', beta.job_id)
    .executeTakeFirstOrThrow();
  expect(job.cancel_requested_at).toBeNull();
  const key = await stack.runtime.db.selectFrom('api_keys').select('revoked_at').where('id', '=', beta.key_id).executeTakeFirstOrThrow();
  expect(key.revoked_at).toBeNull();
  const schedule = await stack.runtime.db
    .selectFrom('schedules')
    .select(['status', 'deleted_at', 'name'])
    .where('id', '=', beta.schedule_id)
    .executeTakeFirstOrThrow();
  expect(schedule).toEqual({ status: 'active', deleted_at: null, name: 'sweep' });
  const monitor = await stack.runtime.db
    .selectFrom('monitors')
    .select(['status', 'deleted_at', 'name'])
    .where('id', '=', beta.monitor_id)
    .executeTakeFirstOrThrow();
  expect(monitor).toEqual({ status: 'active', deleted_at: null, name: 'sweep' });
  expect(await stack.runtime.db.selectFrom('monitor_runs').select('id').where('monitor_id', '=', beta.monitor_id).execute()).toEqual([]);
  const member = await stack.runtime.db
    .selectFrom('memberships')
    .select('role')
    .where('user_id', '=', beta.user_id)
    .where('workspace_id', '=', beta.workspace_id)
    .executeTakeFirstOrThrow();
  expect(member.role).toBe('member');
});

/**
 * The OAuth protocol routes (apps/api/src/oauth) are public by design: they take no key or
 * session, and a credential sent to them grants nothing there. /mcp (the MCP endpoint, the
 * protected resource) answers every missing or refused credential 401 with the
 * WWW-Authenticate header that points an agent to the protected-resource metadata.
 */
describe('OAuth and /mcp', () => {
  it('declares every OAuth protocol route public, and documents it without security', () => {
    for (const route of OAUTH_ROUTES) {
      expect({ route: label(route), access: route.access }).toEqual({ route: label(route), access: 'public' });
      const operation = operationOf(route.method, route.path);
      expect({ route: label(route), security: operation?.security }).toEqual({ route: label(route), security: [] });
    }
  });

  /** An OAuth access token of workspace a (owner's consent, code exchanged), and its grant's key ID. */
  async function oauthToken(): Promise<{ token: string; keyId: string }> {
    const redirect = 'http://127.0.0.1:8765/cb';
    const client = await request(stack.app)
      .post('/oauth/register')
      .send({ client_name: 'sweep agent', redirect_uris: [redirect] });
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const consent = await stack.api.post('/v1/oauth/consent', {
      headers: owner.write(),
      body: {
        client_id: client.body.client_id,
        redirect_uri: redirect,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        workspace_id: a.ids.workspace_id,
        role: 'viewer',
      },
    });
    const code = new URL(consent.body.redirect_to).searchParams.get('code')!;
    const tokens = await request(stack.app)
      .post('/oauth/token')
      .type('form')
      .send({ grant_type: 'authorization_code', client_id: client.body.client_id, code, code_verifier: verifier });
    expect(tokens.status).toBe(200);
    const access = tokens.body.access_token as string;
    const hash = createHash('sha256').update(access).digest('hex');
    const row = await stack.runtime.db.selectFrom('oauth_tokens').select('key_id').where('token_hash', '=', hash).executeTakeFirstOrThrow();
    return { token: access, keyId: row.key_id };
  }

  it('answers /mcp 401 with WWW-Authenticate for a missing, unknown, revoked or expired credential', async () => {
    const expiredToken = await oauthToken();
    await sql`update oauth_tokens set expires_at = now() - interval '1 second' where key_id = ${expiredToken.keyId} and kind = 'access'`.execute(
      stack.runtime.db,
    );
    const revokedGrant = await oauthToken();
    await stack.api.delete(`/v1/keys/${revokedGrant.keyId}`, { headers: owner.write(a.ids.workspace_id) });
    const live = await oauthToken();
    const challenge = `Bearer resource_metadata="${stack.config.appUrl}/.well-known/oauth-protected-resource"`;
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'sweep', version: '1' } },
    };
    const cases: Array<[string, Headers]> = [
      ['none', {}],
      ['unknown key', { 'X-API-Key': 'sdx_live_00000000000000000000000000000000' }],
      ['unknown bearer', { Authorization: 'Bearer sdx_oat_0000000000000000000000000000000000000000' }],
      ['revoked key', revokedKey],
      ['expired key', expiredKey],
      ['expired OAuth token', { Authorization: `Bearer ${expiredToken.token}` }],
      ['revoked OAuth grant', { Authorization: `Bearer ${revokedGrant.token}` }],
      ['session cookie only', owner.write(a.ids.workspace_id)],
    ];
    for (const [name, headers] of cases) {
      let req = request(stack.app).post('/mcp').set('Accept', 'application/json, text/event-stream');
      for (const [header, value] of Object.entries(headers)) req = req.set(header, value);
      const res = await req.send(initialize);
      expect({ name, status: res.status, challenge: res.headers['www-authenticate'] }).toEqual({ name, status: 401, challenge });
    }
    const ok = request(stack.app)
      .post('/mcp')
      .set('Accept', 'application/json, text/event-stream')
      .set('Authorization', `Bearer ${live.token}`);
    expect((await ok.send(initialize)).status).toBe(200);
  });
});
