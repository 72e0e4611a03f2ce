import { createHash, randomBytes } from 'node:crypto';
import request from 'supertest';
import { logInUser, type SessionUser, signUpUser, startSmtpCatcher, startTestStack, type TestStack } from '@sdx/testing';

/**
 * extensions-3.md 1, password reset: confirming a reset ends every session of the user and
 * revokes every OAuth grant they gave (and what was made with it); `revoke_keys: true` also
 * revokes their keys. Reset and resend answer known and unknown emails in the same time: the
 * request queues a mail request, and the mail sender does the lookups and the mail. Through HTTP,
 * with a real SMTP server on loopback.
 */
type Catcher = Awaited<ReturnType<typeof startSmtpCatcher>>;
let smtp: Catcher;
let stack: TestStack;
const REDIRECT = 'http://127.0.0.1:8765/callback';

beforeAll(async () => {
  smtp = await startSmtpCatcher();
  // Verification off: sign-up signs in at once; resends still queue (for accounts that wait).
  // TRUST_PROXY: the timing run comes from many client addresses (X-Forwarded-For), under the 20 mail requests an hour of each.
  stack = await startTestStack({
    env: { SMTP_URL: smtp.url, APP_URL: 'http://console.test', EMAIL_VERIFICATION: '0', TRUST_PROXY: 'loopback' },
  });
});
afterAll(async () => {
  await stack.close();
  await smtp.close();
});

const mailsTo = (to: string) => smtp.messages.filter((m) => m.to === to);
async function resetToken(to: string): Promise<string> {
  await smtp.waitFor((m) => m.to === to && /\/console\/reset\?token=/.test(m.text), 10_000);
  const mail = mailsTo(to)
    .filter((m) => /\/console\/reset\?token=/.test(m.text))
    .at(-1)!;
  return decodeURIComponent(/\/console\/reset\?token=([A-Za-z0-9_%-]+)/.exec(mail.text)![1]);
}

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

/** An agent the user connected to their personal workspace as admin: its access and refresh tokens. */
async function connectAgent(user: SessionUser): Promise<{ access: string; refresh: string; clientId: string; keyId: string }> {
  const registered = await request(stack.app)
    .post('/oauth/register')
    .send({ client_name: 'Agent', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' });
  expect(registered.status).toBe(201);
  const clientId = registered.body.client_id as string;
  const { verifier, challenge } = pkce();
  const consent = await stack.api.post('/v1/oauth/consent', {
    headers: user.write(),
    body: {
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      scope: 'mcp',
      workspace_id: user.personalWorkspaceId,
      role: 'admin',
    },
  });
  expect(consent.status).toBe(200);
  const code = new URL(consent.body.redirect_to).searchParams.get('code')!;
  const tokens = await request(stack.app)
    .post('/oauth/token')
    .type('form')
    .send({ grant_type: 'authorization_code', client_id: clientId, code, code_verifier: verifier, redirect_uri: REDIRECT });
  expect(tokens.status).toBe(200);
  const grant = await stack.runtime.db
    .selectFrom('api_keys')
    .select('id')
    .where('oauth_client_id', '=', clientId)
    .executeTakeFirstOrThrow();
  return { access: tokens.body.access_token, refresh: tokens.body.refresh_token, clientId, keyId: grant.id };
}

/** Everything a user who lost their password may have left behind: two sessions, a key, an agent and the key the agent minted. */
async function intrudedAccount() {
  const user = await signUpUser(stack);
  const other = await logInUser(stack, user.email, user.password);
  const key = await stack.api.post('/v1/keys', { headers: user.write(user.personalWorkspaceId), body: { name: 'made by the user' } });
  expect(key.status).toBe(201);
  const agent = await connectAgent(user);
  const minted = await request(stack.app)
    .post('/v1/keys')
    .set('Authorization', `Bearer ${agent.access}`)
    .send({ name: 'minted by the agent', role: 'member' });
  expect(minted.status).toBe(201);
  return { user, other, key: key.body.api_key as string, agent, minted: minted.body.api_key as string };
}

const accountWith = (headers: Record<string, string>) => request(stack.app).get('/v1/account').set(headers);

async function reset(email: string, body: Record<string, unknown> = {}): Promise<void> {
  expect((await stack.api.post('/v1/auth/password-reset', { body: { email } })).status).toBe(202);
  const token = await resetToken(email);
  const confirmed = await stack.api.post('/v1/auth/password-reset/confirm', {
    body: { token, new_password: 'the new long password', ...body },
  });
  expect(confirmed.status).toBe(204);
}

describe('POST /v1/auth/password-reset/confirm', () => {
  it("ends every session and revokes every OAuth grant, with what it made; the user's own keys stay", async () => {
    const { user, other, key, agent, minted } = await intrudedAccount();
    expect((await accountWith({ Authorization: `Bearer ${agent.access}` })).status).toBe(200);
    await reset(user.email);

    for (const session of [user, other]) expect((await stack.api.get('/v1/auth/session', { headers: session.read() })).status).toBe(401);
    expect((await accountWith({ Authorization: `Bearer ${agent.access}` })).status).toBe(401);
    expect((await accountWith({ 'X-API-Key': minted })).status).toBe(401);
    const refreshed = await request(stack.app)
      .post('/oauth/token')
      .type('form')
      .send({ grant_type: 'refresh_token', client_id: agent.clientId, refresh_token: agent.refresh });
    expect([refreshed.status, refreshed.body.error]).toEqual([400, 'invalid_grant']);
    expect((await accountWith({ 'X-API-Key': key })).status).toBe(200);

    const revoked = await stack.runtime.db
      .selectFrom('audit_events')
      .select(['target_id', 'data'])
      .where('action', '=', 'api_key.revoked')
      .where('workspace_id', '=', user.personalWorkspaceId)
      .execute();
    expect(revoked.map((e) => e.target_id)).toContain(agent.keyId);
    expect(revoked.every((e) => (e.data as { reason?: string }).reason === 'password_reset')).toBe(true);
    expect(revoked).toHaveLength(2);
    const audit = await stack.runtime.db
      .selectFrom('audit_events')
      .select('data')
      .where('action', '=', 'user.password_reset')
      .where('workspace_id', '=', user.personalWorkspaceId)
      .executeTakeFirstOrThrow();
    expect(audit.data).toMatchObject({ sessions_ended: 2, keys_revoked: 2, revoke_keys: false });
    // The old password is gone, the new one signs in.
    expect((await stack.api.post('/v1/auth/login', { body: { email: user.email, password: user.password } })).status).toBe(401);
    expect((await stack.api.post('/v1/auth/login', { body: { email: user.email, password: 'the new long password' } })).status).toBe(200);
  });

  it("with revoke_keys: true revokes the user's keys too, in every workspace", async () => {
    const { user, key, agent, minted } = await intrudedAccount();
    const team = await stack.api.post('/v1/workspaces', { headers: user.write(), body: { name: 'Team' } });
    const teamKey = await stack.api.post('/v1/keys', { headers: user.write(team.body.id), body: { name: 'team key' } });
    expect(teamKey.status).toBe(201);
    await reset(user.email, { revoke_keys: true });
    const credentials: Array<Record<string, string>> = [
      { 'X-API-Key': key },
      { 'X-API-Key': teamKey.body.api_key },
      { 'X-API-Key': minted },
      { Authorization: `Bearer ${agent.access}` },
    ];
    for (const headers of credentials) {
      expect((await accountWith(headers)).status).toBe(401);
    }
  });

  it("leaves other users' keys and grants alone", async () => {
    const bystander = await intrudedAccount();
    const { user } = await intrudedAccount();
    await reset(user.email, { revoke_keys: true });
    expect((await accountWith({ 'X-API-Key': bystander.key })).status).toBe(200);
    expect((await accountWith({ Authorization: `Bearer ${bystander.agent.access}` })).status).toBe(200);
    expect((await stack.api.get('/v1/auth/session', { headers: bystander.user.read() })).status).toBe(200);
  });
});

describe('reset and resend answer known and unknown emails in the same time', () => {
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  let client = 0;
  async function timed(path: string, email: string): Promise<number> {
    client += 1;
    const address = `10.45.${Math.floor(client / 250)}.${client % 250}`;
    const started = process.hrtime.bigint();
    const res = await request(stack.app).post(path).set('X-Forwarded-For', address).send({ email });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    expect(res.status).toBe(202);
    return ms;
  }

  it('queues the same work for both, and the mail follows from the background for the known one', async () => {
    const known = await signUpUser(stack);
    const before = mailsTo(known.email).length;
    const unknown = `nobody.${Date.now().toString(36)}@example.com`;
    expect((await stack.api.post('/v1/auth/password-reset', { body: { email: unknown } })).status).toBe(202);
    expect((await stack.api.post('/v1/auth/password-reset', { body: { email: known.email } })).status).toBe(202);
    await resetToken(known.email);
    expect(mailsTo(known.email).length).toBe(before + 1);
    // Both requests were resolved by the sender (nothing left), and the unknown email got nothing.
    await smtp.waitFor(() => true, 10);
    for (let i = 0; i < 100; i++) {
      const left = await stack.runtime.db.selectFrom('mail_requests').select('id').execute();
      if (left.length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await stack.runtime.db.selectFrom('mail_requests').select('id').execute()).toEqual([]);
    expect(mailsTo(unknown)).toEqual([]);
  });

  it('takes the same median time for a known and an unknown email, for resets and resends (over many requests)', async () => {
    const known = await signUpUser(stack);
    for (const path of ['/v1/auth/password-reset', '/v1/auth/verify/resend']) {
      // Pairs of one known and one unknown email back to back, in alternating order: the load on
      // the machine (shared, busy) falls on both halves of a pair alike, and the median of the
      // pairs' ratios ignores the pairs a burst of load hit.
      const ratios: number[] = [];
      const knownTimes: number[] = [];
      const unknownTimes: number[] = [];
      for (let i = 0; i < 50; i++) {
        const stranger = `nobody${i}.${Date.now().toString(36)}@example.com`;
        let k: number;
        let u: number;
        if (i % 2) {
          k = await timed(path, known.email);
          u = await timed(path, stranger);
        } else {
          u = await timed(path, stranger);
          k = await timed(path, known.email);
        }
        knownTimes.push(k);
        unknownTimes.push(u);
        ratios.push(k / u);
      }
      const ratio = median(ratios);
      console.log(
        `${path}: median ${median(knownTimes).toFixed(1)} ms known, ${median(unknownTimes).toFixed(1)} ms unknown; median ratio of pairs ${ratio.toFixed(2)}`,
      );
      // The review measured 96 ms against 63 ms (1.52) before the work moved to the background.
      expect(ratio).toBeGreaterThan(0.75);
      expect(ratio).toBeLessThan(1.33);
    }
  });
});
