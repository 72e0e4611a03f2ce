import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { createApiServer } from '@sdx/app-api';
import { loadOpenApiDocument } from '@sdx/contract';
import { addMember, createUser, hashPassword, issueToken, systemClock, totpAt } from '@sdx/domain/testing';
import { type FakeStripe, startFakeStripe } from '@sdx/fake-stripe';
import {
  createResponseValidator,
  type LoopbackS3,
  ResponseContractError,
  type SessionUser,
  signUpUser,
  startLoopbackS3,
} from '@sdx/testing';
import {
  type FuzzAccounts,
  type FuzzOperation,
  type FuzzRequest,
  fuzzOperations,
  requestArbitrary,
  type SeededWorkspace,
  startSmtpCatcher,
  startTestStack,
  type TestStack,
} from '@sdx/testing';

/**
 * The contract fuzzer: FUZZ_REQUESTS requests (10,000 by default, the CI figure) generated from
 * openapi.yaml for every operation, valid and mutated (missing and unknown keys, values of the
 * wrong kind, text Postgres cannot store, strict-integer breakers, deep and oversize bodies,
 * other content types, no or foreign credentials, foreign and hostile IDs), sent over HTTP to
 * the API with a worker running, with the workspace's API key or its owner's browser session
 * (cookie and CSRF token). IDs the service creates are reused by later requests, and so is
 * what the accounts side answers: the users the fuzzer signs up sign in, are invited to the
 * workspace and accept, sessions from sign-ins are signed out, team workspaces, invitations,
 * members and keys it created are listed, changed, revoked and removed; mailed verification and
 * reset tokens are redeemed, and the owner's two-factor sign-in is set up, turned on with a
 * current code and off with a recovery code. Billing runs against a fake Stripe: checkouts of
 * the packs on sale, and Stripe events the fuzzer signs as Stripe does (handled, ignored or
 * naming nothing the service knows) besides unsigned ones. Destinations name a loopback S3 (their
 * check write succeeds), and jobs, batches and schedules name the destinations the run created
 * (or none), so their exports are delivered to it. Every response must be
 * documented by openapi.yaml (status, content type, body schema), none may be a 5xx, and every
 * operation must answer a success at least once. FUZZ_SEED replays a run.
 *
 * The test suite (and CI) sends the fast subset, 5,000 requests; `npm run test:fuzz` sends 20,000
 * (FUZZ_REQUESTS sets any number).
 */
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 5_000);
const SEED = Number(process.env.FUZZ_SEED ?? 17_2026);
const CONCURRENCY = 8;
/** The password of every user of the run. */
const PASSWORD = 'fuzz-password-17';

interface Session {
  email: string;
  cookie: string;
  csrf: string;
}

interface Invitation {
  id: string;
  token: string;
  email: string;
}

let stack: TestStack;
let main: SeededWorkspace;
let other: SeededWorkspace;
/** Owner of `main`, signed in: its session is the fuzzer's second credential, never signed out. */
let owner: SessionUser;
/** The user whose password changes (to the same): the change ends its other sessions. */
let changer: SessionUser;
const PASSWORD_OPERATIONS = new Set(['signUp', 'logIn', 'changePassword', 'confirmPasswordReset', 'disableTwoFactor']);

/** Tokens as mailed: verification links of users waiting for one, reset links of users of their own (a reset ends their sessions). */
const verificationTokens: string[] = [];
const resetTokens: string[] = [];
/** The owner's two-factor state as the answers tell it: the secret of the last setup, the recovery codes of the last enable. */
let twoFactorSecret: string | null = null;
let recoveryCodes: string[] = [];

/** Members of `main` besides its owner, added at the start: removed and given other roles. */
const MEMBERS = 6;
/** Users the fuzzer signed up (invitable), by email. */
const users = new Map<string, Session>();
/** Sessions of sign-ins and sign-ups, for sign-out. */
const sessions: Session[] = [];
/** Invitations not yet accepted or revoked. */
const invitations: Invitation[] = [];
/** Destinations of `main` not yet deleted, for the bodies that name one (the path pool keeps deleted ones too). */
const destinations: string[] = [];
let server: http.Server;
let smtp: Awaited<ReturnType<typeof startSmtpCatcher>>;
/** Stripe, faked on loopback: checkouts succeed, and the fuzzer signs the Stripe events it sends as Stripe would. */
let stripe: FakeStripe;
/** The bucket destinations write to, an S3 on loopback. */
let s3: LoopbackS3;
const BUCKET = 'fuzz-exports';
let base: string;
const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });

beforeAll(async () => {
  // A mail server on loopback, so every operation (a password reset too) can succeed; sign-up
  // stays immediate (EMAIL_VERIFICATION=0) so the fuzzer's users are signed in at once.
  smtp = await startSmtpCatcher();
  stripe = await startFakeStripe({ webhookUrl: null });
  s3 = await startLoopbackS3([BUCKET]);
  // Webhook hosts resolve to loopback (a fake DNS, allowed here): nothing leaves the machine.
  // Destinations' endpoint is the loopback S3, an http URL (allowed here with WEBHOOK_ALLOW_HTTP).
  stack = await startTestStack({
    stripe,
    // The run's wrong codes and passwords all come from one address: the sign-in limits (tested
    // on their own) are raised so that they do not decide which operations the run reaches.
    loginLimits: { perEmail: 100_000, perAddress: 100_000, windowSeconds: 900 },
    withWorker: true,
    workerConcurrency: 8,
    env: {
      SYNC_TIMEOUT_MS: '1500',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1',
      WEBHOOK_ALLOW_HTTP: '1',
      SMTP_URL: smtp.url,
      EMAIL_VERIFICATION: '0',
    },
    webhookResolver: () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]),
  });
  const ample = { credits: 1_000_000_000, rateLimitPerMinute: 1_000_000_000, maxActiveJobs: 1_000_000, maxResultLimit: 25_000 };
  main = await stack.workspace(ample);
  other = await stack.workspace(ample);
  owner = await signUpUser(stack, { password: PASSWORD });
  changer = await signUpUser(stack, { password: PASSWORD });
  await stack.runtime.db
    .transaction()
    .execute((tx) => addMember(tx, main.workspaceId, owner.userId, 'owner', { type: 'system', id: null, ip: null }));
  for (let i = 0; i < 3; i++) {
    const user = await signUpUser(stack, { password: PASSWORD });
    users.set(user.email, { email: user.email, cookie: user.cookie, csrf: user.csrf });
  }
  for (let i = 0; i < MEMBERS; i++) {
    const member = await signUpUser(stack, { password: PASSWORD });
    await stack.runtime.db
      .transaction()
      .execute((tx) => addMember(tx, main.workspaceId, member.userId, 'member', { type: 'system', id: null, ip: null }));
    remember(created, 'user_id', member.userId);
  }
  const passwordHash = await hashPassword(PASSWORD);
  for (let i = 0; i < 20; i++) {
    await stack.runtime.db.transaction().execute(async (tx) => {
      const now = new Date();
      const waiting = await createUser(
        tx,
        systemClock,
        { email: `unverified${i}.${SEED}@example.com`, passwordHash, credits: 0, verified: false },
        { ip: null },
      );
      verificationTokens.push(await issueToken(tx, waiting.user.id, 'verify_email', now));
      const forgetful = await createUser(
        tx,
        systemClock,
        { email: `forgetful${i}.${SEED}@example.com`, passwordHash, credits: 0 },
        { ip: null },
      );
      resetTokens.push(await issueToken(tx, forgetful.user.id, 'reset_password', now));
    });
  }
  // A live subscription of the fuzzed workspace (Checkout paid, its events delivered as Stripe
  // would), so that changing and cancelling it can succeed.
  const checkout = await stack.api.post('/v1/billing/subscription', { headers: main.auth, body: { plan_id: 'starter' } });
  expect(checkout.status).toBe(201);
  for (const event of await stripe.payCheckoutSession(checkout.body.checkout_id as string)) {
    const payload = JSON.stringify(event);
    const delivered = await stack.api.post('/v1/billing/stripe/webhook', {
      raw: payload,
      headers: { 'Stripe-Signature': stripe.sign(payload) },
    });
    expect(delivered.status).toBe(200);
  }
  server = createApiServer(stack.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  agent.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await stack.close();
  await smtp.close();
  await stripe.close();
  await s3.stop();
});

interface Reply {
  status: number;
  contentType: string;
  text: string;
  /** The session cookie it set (`sdx_session=...`), if any. */
  cookie: string | null;
}

function send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const all: Record<string, string | number> = { ...headers };
    if (body !== undefined) all['content-length'] = Buffer.byteLength(body);
    const req = http.request(`${base}${path}`, { agent, method: method.toUpperCase(), headers: all }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      const cookie =
        (res.headers['set-cookie'] ?? []).map((line) => line.split(';')[0]).find((pair) => /^sdx_session=./.test(pair)) ?? null;
      const reply = () => ({
        status: res.statusCode ?? 0,
        contentType: String(res.headers['content-type'] ?? ''),
        text: Buffer.concat(chunks).toString('utf8'),
        cookie,
      });
      res.on('end', () => resolve(reply()));
      // A live stream lasts until its job or batch ends: its status and headers are what is checked.
      if (String(res.headers['content-type']).startsWith('text/event-stream')) {
        resolve(reply());
        res.destroy();
      }
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** IDs by path parameter, created by the fuzzed workspace or by the other one. */
const POOL_OF: Record<string, RegExp> = {
  job_id: /^job_/,
  batch_id: /^bat_/,
  schedule_id: /^sch_/,
  workspace_id: /^ws_/,
  invitation_id: /^inv_/,
  key_id: /^key_/,
  user_id: /^usr_/,
  webhook_id: /^whk_/,
  delivery_id: /^dlv_/,
  destination_id: /^dst_/,
  monitor_id: /^mon_/,
};
const created: Record<string, string[]> = Object.fromEntries(Object.keys(POOL_OF).map((name) => [name, []]));
const foreign: Record<string, string[]> = Object.fromEntries(Object.keys(POOL_OF).map((name) => [name, []]));

/** Pool sizes: the newest IDs are kept; workspaces few, so the fuzzed workspace (first, kept) is picked often. */
const POOL_SIZE: Record<string, number> = { workspace_id: 2 };

function remember(into: Record<string, string[]>, param: string, id: unknown): void {
  if (typeof id !== 'string' || !POOL_OF[param].test(id) || into[param].includes(id)) return;
  const pool = into[param];
  pool.push(id);
  if (pool.length > (POOL_SIZE[param] ?? 200)) pool.splice(param === 'workspace_id' ? 1 : 0, 1);
}

/**
 * Collects the IDs an answer names, for later requests' paths. Key IDs only from the keys the
 * run created (never the workspace's own key: revoking it would end the run's API access), and
 * user IDs only of members other than the owner (removing or demoting the owner would end its
 * session's access).
 */
function harvest(operationId: string, value: unknown, into: Record<string, string[]>, depth = 0): void {
  if (depth > 3 || value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value.slice(0, 20)) harvest(operationId, item, into, depth + 1);
    return;
  }
  const record = value as Record<string, unknown>;
  for (const param of Object.keys(POOL_OF)) {
    if (param === 'key_id' && operationId !== 'createKey') continue;
    if (param !== 'user_id') remember(into, param, record.id);
  }
  if (record.user_id !== owner.userId) remember(into, 'user_id', record.user_id);
  if (Array.isArray(record.jobs)) harvest(operationId, record.jobs, into, depth + 1);
}

/**
 * POST /v1/extract answers 502 extraction_failed when its job ends without a result, and a
 * fuzzed cancel of a harvested job ID may be the one that ended it (cause `cancelled`): the
 * documented answer to what the fuzzer itself did, not a server error. It is still checked
 * against openapi.yaml like every answer.
 */
function cancelledWhileWaiting(op: FuzzOperation, reply: Reply): boolean {
  if (op.operationId !== 'extract' || reply.status !== 502) return false;
  try {
    const detail = (JSON.parse(reply.text) as { detail?: { error?: string; cause?: { code?: string } } }).detail;
    return detail?.error === 'extraction_failed' && detail.cause?.code === 'cancelled';
  } catch {
    return false;
  }
}

/** The webhook of each delivery seen, so a path naming a created delivery names its own webhook. */
const webhookOfDelivery = new Map<string, string>();

function pathOf(request: FuzzRequest): string {
  let path = request.operation.template;
  const values: Record<string, string> = {};
  for (const [name, choice] of Object.entries(request.ids)) {
    if (choice.kind === 'literal') values[name] = choice.value;
    else {
      const pool = (choice.kind === 'created' ? created : foreign)[name] ?? [];
      values[name] = pool.length ? pool[choice.pick % pool.length] : 'job_none';
    }
  }
  // A created delivery goes with its webhook when both are picked from what the run created.
  const webhook = values.delivery_id !== undefined ? webhookOfDelivery.get(values.delivery_id) : undefined;
  if (webhook && request.ids.webhook_id?.kind === 'created' && request.ids.delivery_id?.kind === 'created') values.webhook_id = webhook;
  for (const [name, value] of Object.entries(values)) {
    path = path.replace(`{${name}}`, request.ids[name].kind === 'literal' ? value : encodeURIComponent(value));
  }
  if (request.query.length)
    path += `?${request.query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`.replace(/%2500/g, '%00')).join('&')}`;
  return path;
}

let emails = 0;
let signOuts = 0;
let previews = 0;

/**
 * An invitation preview names its invitation by the token in its query: every other admissible
 * one names a token the service issued (the rest keep the fuzzed value, which is unknown).
 */
function withIssuedToken(request: FuzzRequest): FuzzRequest {
  if (request.operation.operationId !== 'previewInvitation' || request.mutation.startsWith('query ') || previews++ % 2 === 1)
    return request;
  const issued = pick(invitations, previews);
  return issued ? { ...request, query: [['token', issued.token]] } : request;
}

/** A request as sent: its body with the fills made, and the session it is sent with, if any. */
interface Prepared {
  path: string;
  headers: Record<string, string>;
  body?: string;
  session: Session | null;
  invitation: Invitation | null;
}

const pick = <T>(items: readonly T[], n: number): T | undefined => (items.length ? items[n % items.length] : undefined);

function prepare(request: FuzzRequest): Prepared {
  let body = request.body;
  let invitation: Invitation | null = null;
  if (body !== undefined && Object.keys(request.fills).length > 0) {
    const filled = JSON.parse(body) as Record<string, unknown>;
    for (const [key, fill] of Object.entries(request.fills)) {
      if (fill.pool === 'new_email') filled[key] = `fuzz${++emails}.${SEED}@example.com`;
      if (fill.pool === 'user_email') filled[key] = pick([owner.email, changer.email, ...users.keys()], fill.pick);
      if (fill.pool === 'invitee_email') filled[key] = pick([...users.keys()], fill.pick) ?? 'nobody@example.com';
      if (fill.pool === 'verification_token') filled[key] = pick(verificationTokens, fill.pick) ?? 'none';
      if (fill.pool === 'reset_token') filled[key] = pick(resetTokens, fill.pick) ?? 'none';
      if (fill.pool === 'totp_code') filled[key] = twoFactorSecret ? totpAt(twoFactorSecret, new Date()) : '000000';
      if (fill.pool === 'destination_id') filled[key] = pick(destinations, fill.pick) ?? null;
      if (fill.pool === 'recovery_code') filled[key] = pick(recoveryCodes, fill.pick) ?? 'none-none-none';
      if (fill.pool === 'invitation_token') {
        invitation = pick(invitations, fill.pick) ?? null;
        filled[key] = invitation?.token ?? 'inv_none';
      }
    }
    body = JSON.stringify(filled);
  }
  const op = request.operation;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers))
    headers[name] = name === 'X-Workspace-ID' && value === 'self' ? main.workspaceId : value;
  let session: Session | null = null;
  switch (request.credential) {
    case 'valid':
      headers['X-API-Key'] = main.apiKey;
      break;
    case 'bearer':
      headers.Authorization = `Bearer ${main.apiKey}`;
      break;
    case 'unknown':
      headers['X-API-Key'] = 'sdx_live_00000000000000000000000000000000';
      break;
    case 'other_workspace':
      headers['X-API-Key'] = other.apiKey;
      break;
    case 'session':
    case 'session_without_csrf':
      // The owner's session acts on the fuzzed workspace; signing out takes a session of a
      // sign-in, a password change the changer's, an acceptance the invitee's.
      if (op.operationId === 'logOut') session = pick(sessions, signOuts++) ?? null;
      else if (op.operationId === 'changePassword') session = { email: changer.email, cookie: changer.cookie, csrf: changer.csrf };
      else if (op.operationId === 'acceptInvitation') session = (invitation && users.get(invitation.email)) ?? null;
      else {
        session = { email: owner.email, cookie: owner.cookie, csrf: owner.csrf };
        headers['X-Workspace-ID'] ??= main.workspaceId;
      }
      if (session) {
        headers.Cookie = session.cookie;
        if (op.method !== 'get' && request.credential === 'session') headers['X-CSRF-Token'] = session.csrf;
      }
      break;
    case 'none':
      break;
  }
  if (body !== undefined) headers['Content-Type'] = request.contentType ?? 'application/json';
  // A Stripe event of the admissible kind is signed as Stripe signs it; the others stay unsigned.
  if (op.operationId === 'receiveStripeWebhook' && request.mutation === 'admissible' && body !== undefined)
    headers['Stripe-Signature'] = stripe.sign(body);
  return { path: pathOf(withIssuedToken(request)), headers, body, session, invitation };
}

/** What an answer of the accounts side gives later requests: sessions, users, invitations. */
function learn(request: FuzzRequest, prepared: Prepared, reply: Reply, body: unknown): void {
  const record = (body ?? {}) as { user?: { email?: string }; csrf_token?: string; id?: string; token?: string; email?: string };
  switch (request.operation.operationId) {
    case 'signUp':
    case 'logIn':
      if (reply.status < 300 && reply.cookie && record.user?.email && record.csrf_token) {
        const session = { email: record.user.email, cookie: reply.cookie, csrf: record.csrf_token };
        sessions.push(session);
        if (sessions.length > 50) sessions.shift();
        if (request.operation.operationId === 'signUp') users.set(session.email, session);
      }
      break;
    case 'logOut':
      if (reply.status === 204 && prepared.session && sessions.includes(prepared.session))
        sessions.splice(sessions.indexOf(prepared.session), 1);
      break;
    case 'createInvitation':
      if (reply.status === 201 && record.id && record.token && record.email)
        invitations.push({ id: record.id, token: record.token, email: record.email });
      break;
    case 'setUpTwoFactor':
      if (reply.status === 200) twoFactorSecret = (body as { secret: string }).secret;
      break;
    case 'enableTwoFactor':
      if (reply.status === 200) recoveryCodes = (body as { recovery_codes: string[] }).recovery_codes;
      break;
    case 'disableTwoFactor':
      if (reply.status === 204) {
        twoFactorSecret = null;
        recoveryCodes = [];
      }
      break;
    case 'createDestination':
      if (reply.status === 201 && record.id && request.credential !== 'other_workspace') destinations.push(record.id);
      break;
    case 'deleteDestination': {
      const deleted = destinations.find((id) => prepared.path.split('?')[0] === `/v1/destinations/${id}`);
      if (reply.status === 204 && deleted) destinations.splice(destinations.indexOf(deleted), 1);
      break;
    }
    case 'acceptInvitation':
    case 'revokeInvitation':
      if (reply.status < 300) {
        const used = prepared.invitation ?? invitations.find((i) => prepared.path.includes(i.id));
        if (used && invitations.includes(used)) invitations.splice(invitations.indexOf(used), 1);
      }
      break;
  }
}

it(`${REQUESTS} generated requests over every operation: no 5xx, every response as openapi.yaml documents`, async () => {
  const document = loadOpenApiDocument();
  const validator = createResponseValidator();
  const operations = fuzzOperations(document);
  expect(operations.length).toBeGreaterThanOrEqual(20);

  // The other workspace owns a job, a batch and a schedule: their IDs must be not found here.
  const job = await stack.api.post('/v1/jobs', {
    headers: other.auth,
    body: { platform: 'instagram', operation: 'profile', target: 'natgeo' },
  });
  const batch = await stack.api.post('/v1/batches', {
    headers: other.auth,
    body: { platform: 'instagram', operation: 'profile', targets: ['nasa', 'natgeo'] },
  });
  const schedule = await stack.api.post('/v1/schedules', {
    headers: other.auth,
    body: {
      name: 'other',
      operation: 'profile',
      targets: ['nasa'],
      frequency: 'daily',
      timezone: 'UTC',
      starts_at: '2031-01-01T00:00:00Z',
    },
  });
  const webhook = await stack.api.post('/v1/webhooks', {
    headers: other.auth,
    body: { url: 'https://hooks.example.com/other', events: ['*'] },
  });
  const bucket = { endpoint: s3.endpoint, bucket: BUCKET, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey };
  const destination = await stack.api.post('/v1/destinations', {
    headers: other.auth,
    body: {
      name: 'other',
      type: 's3',
      bucket: BUCKET,
      endpoint: bucket.endpoint,
      force_path_style: true,
      access_key_id: bucket.accessKeyId,
      secret_access_key: bucket.secretAccessKey,
    },
  });
  expect(destination.status).toBe(201);
  for (const res of [job, batch, schedule, webhook, destination]) harvest('other', res.body, foreign);
  remember(foreign, 'workspace_id', other.workspaceId);
  remember(created, 'workspace_id', main.workspaceId);

  const accounts: FuzzAccounts = { password: PASSWORD, bucket };
  // Operations that hash or check a password (argon2id, tens of milliseconds of CPU each) are
  // drawn a quarter as often as the others.
  const arbitrary = fc.oneof(
    ...operations.map((op) => ({
      weight: PASSWORD_OPERATIONS.has(op.operationId) ? 1 : 4,
      arbitrary: requestArbitrary(document, op, accounts),
    })),
  );
  const tally = new Map<string, Map<number, number>>();
  const serverErrors: string[] = [];
  const breaks: string[] = [];
  let sent = 0;
  const started = Date.now();

  const describe = (request: FuzzRequest, path: string, reply: Reply) =>
    `${request.operation.method.toUpperCase()} ${path.slice(0, 160)} [${request.mutation}; ${request.credential}] ${(request.body ?? '').slice(0, 200)} → ${reply.status} ${reply.text.slice(0, 200)}`;

  const runOne = async (request: FuzzRequest) => {
    const op: FuzzOperation = request.operation;
    const prepared = prepare(request);
    const path = prepared.path;
    const reply = await send(op.method, path, prepared.headers, prepared.body);
    const byStatus = tally.get(op.operationId) ?? new Map<number, number>();
    byStatus.set(reply.status, (byStatus.get(reply.status) ?? 0) + 1);
    tally.set(op.operationId, byStatus);
    if (reply.status >= 500 && !cancelledWhileWaiting(op, reply)) serverErrors.push(describe(request, path, reply));
    const json = /^application\/json/.test(reply.contentType);
    let body: unknown;
    if (json) {
      try {
        body = JSON.parse(reply.text);
      } catch {
        breaks.push(`${describe(request, path, reply)}: body is not JSON`);
        return;
      }
    }
    try {
      validator.validate(op.method, path.split('?')[0], reply.status, body, reply.contentType || undefined);
    } catch (error) {
      if (!(error instanceof ResponseContractError)) throw error;
      breaks.push(`${describe(request, path, reply)}: ${error.problems.join('; ')}`);
    }
    if (reply.status < 300 && body !== undefined)
      harvest(op.operationId, body, request.credential === 'other_workspace' ? foreign : created);
    // Deliveries do not name their webhook: the path of the request that answered them does.
    const webhookInPath = /^\/v1\/webhooks\/(whk_[a-z0-9]+)\//.exec(prepared.path)?.[1];
    if (reply.status < 300 && webhookInPath && body !== undefined) {
      for (const item of Array.isArray(body) ? body : [body]) {
        const id = (item as { id?: unknown } | null)?.id;
        if (typeof id === 'string' && id.startsWith('dlv_')) webhookOfDelivery.set(id, webhookInPath);
      }
    }
    learn(request, prepared, reply, body);
  };

  const CHUNK = 500;
  for (let offset = 0; offset < REQUESTS; offset += CHUNK) {
    const requests = fc.sample(arbitrary, { numRuns: Math.min(CHUNK, REQUESTS - offset), seed: SEED + offset });
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < requests.length) {
          const request = requests[next++];
          await runOne(request);
          sent += 1;
        }
      }),
    );
  }

  const seconds = (Date.now() - started) / 1000;
  const table = [...tally.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(
      ([op, statuses]) =>
        `  ${op}: ${[...statuses.entries()]
          .sort(([a], [b]) => a - b)
          .map(([s, n]) => `${s}×${n}`)
          .join(' ')}`,
    )
    .join('\n');
  process.stdout.write(
    `contract fuzz: ${sent} requests in ${seconds.toFixed(1)} s (seed ${SEED}); 5xx: ${serverErrors.length}; contract breaks: ${breaks.length}\n${table}\n` +
      (serverErrors.length ? `5xx:\n  ${serverErrors.slice(0, 10).join('\n  ')}\n` : '') +
      (breaks.length ? `breaks:\n  ${breaks.slice(0, 10).join('\n  ')}\n` : ''),
  );

  expect(sent).toBe(REQUESTS);
  expect(serverErrors.slice(0, 10)).toEqual([]);
  expect(breaks.slice(0, 10)).toEqual([]);
  // Every operation was exercised, and valid requests reached the domain: each operation
  // answered a success at least once (given enough requests to make that near certain).
  expect([...tally.keys()].sort()).toEqual(operations.map((op) => op.operationId).sort());
  if (REQUESTS >= 5000) {
    const neverSucceeded = operations
      // The dev outbox answers only without SMTP_URL, which this run sets so that mailed tokens reach it (dev-mail.test.ts covers the outbox).
      .filter((op) => op.operationId !== 'listDevMail')
      .filter((op) => ![...(tally.get(op.operationId)?.keys() ?? [])].some((s) => s < 300))
      .map((op) => op.operationId);
    expect(neverSucceeded).toEqual([]);
  }
}, 900_000);
