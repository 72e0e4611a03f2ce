import { randomBytes } from 'node:crypto';
import { cookieFrom, signUpUser, startSmtpCatcher, startTestStack, type TestStack } from '@sdx/testing';

/** extensions-2.md 2: password reset by mail, single-use one-hour tokens, every session ended. */
type Catcher = Awaited<ReturnType<typeof startSmtpCatcher>>;
let smtp: Catcher;
let stack: TestStack;
const clock = { offsetMs: 0, now: () => new Date(Date.now() + clock.offsetMs) };
const APP_URL = 'http://console.test';

beforeAll(async () => {
  smtp = await startSmtpCatcher();
  // Verification off here: users sign up signed in, as most deployments' first users do.
  stack = await startTestStack({ clock, env: { SMTP_URL: smtp.url, APP_URL, EMAIL_VERIFICATION: '0' } });
});
afterAll(async () => {
  await stack.close();
  await smtp.close();
});
beforeEach(() => {
  clock.offsetMs = 0;
});

const mailsTo = (to: string) => smtp.messages.filter((m) => m.to === to);
async function resetToken(to: string, count = 1): Promise<string> {
  await smtp.waitFor(() => mailsTo(to).length >= count, 10_000);
  const match = /\/console\/reset\?token=([A-Za-z0-9_%-]+)/.exec(mailsTo(to).at(-1)!.text);
  if (!match) throw new Error('no reset link in the mail');
  return decodeURIComponent(match[1]);
}

describe('password reset', () => {
  it('answers 202 for known and unknown emails alike; only a known one gets a link', async () => {
    const user = await signUpUser(stack);
    const known = await stack.api.post('/v1/auth/password-reset', { body: { email: user.email } });
    const unknown = await stack.api.post('/v1/auth/password-reset', { body: { email: 'nobody.here@example.com' } });
    for (const res of [known, unknown]) {
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ accepted: true });
    }
    const token = await resetToken(user.email);
    expect(mailsTo(user.email)[0].html).toContain(`${APP_URL}/console/reset?token=`);
    expect(token.length).toBeGreaterThan(30);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(mailsTo('nobody.here@example.com')).toHaveLength(0);
  });

  it('sets the new password once, ends every session, and refuses the token after', async () => {
    const user = await signUpUser(stack);
    const second = await stack.api.post('/v1/auth/login', { body: { email: user.email, password: user.password } });
    await stack.api.post('/v1/auth/password-reset', { body: { email: user.email } });
    const token = await resetToken(user.email);

    const done = await stack.api.post('/v1/auth/password-reset/confirm', { body: { token, new_password: 'a brand new passphrase' } });
    expect(done.status).toBe(204);
    for (const cookie of [user.cookie, cookieFrom(second)!]) {
      expect((await stack.api.get('/v1/auth/session', { headers: { Cookie: cookie } })).status).toBe(401);
    }
    expect((await stack.api.post('/v1/auth/login', { body: { email: user.email, password: user.password } })).status).toBe(401);
    expect((await stack.api.post('/v1/auth/login', { body: { email: user.email, password: 'a brand new passphrase' } })).status).toBe(200);

    const reuse = await stack.api.post('/v1/auth/password-reset/confirm', { body: { token, new_password: 'yet another passphrase' } });
    expect(reuse.status).toBe(410);
    expect(reuse.body.detail.error).toBe('reset_token_invalid');
    const audit = await stack.runtime.db
      .selectFrom('audit_events')
      .select(['action', 'data'])
      .where('workspace_id', '=', user.personalWorkspaceId)
      .where('action', '=', 'user.password_reset')
      .execute();
    expect(audit).toEqual([{ action: 'user.password_reset', data: { sessions_ended: 2, keys_revoked: 0, revoke_keys: false } }]);
  });

  it('refuses a token past its hour, and a short new password with 422', async () => {
    const user = await signUpUser(stack);
    await stack.api.post('/v1/auth/password-reset', { body: { email: user.email } });
    const token = await resetToken(user.email);
    const short = await stack.api.post('/v1/auth/password-reset/confirm', { body: { token, new_password: 'short' } });
    expect(short.status).toBe(422);
    clock.offsetMs = 3600_000 + 1000;
    const late = await stack.api.post('/v1/auth/password-reset/confirm', { body: { token, new_password: 'a brand new passphrase' } });
    expect(late.status).toBe(410);
    expect(late.body.detail.error).toBe('reset_token_invalid');
    clock.offsetMs = 59 * 60_000;
    expect(
      (await stack.api.post('/v1/auth/password-reset/confirm', { body: { token, new_password: 'a brand new passphrase' } })).status,
    ).toBe(204);
  });

  it('mails at most 5 links per email an hour, silently', async () => {
    const user = await signUpUser(stack);
    for (let i = 0; i < 7; i++) expect((await stack.api.post('/v1/auth/password-reset', { body: { email: user.email } })).status).toBe(202);
    await smtp.waitFor(() => mailsTo(user.email).length >= 5, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(mailsTo(user.email)).toHaveLength(5);
  });

  it('answers 503 mail_unavailable in production without SMTP_URL (no dev outbox there: GET /v1/dev/mail is 404)', async () => {
    const noMail = await startTestStack({ env: { NODE_ENV: 'production', SECRETS_KEY: randomBytes(32).toString('base64') } });
    try {
      const res = await noMail.api.post('/v1/auth/password-reset', { body: { email: 'ada@example.com' } });
      expect(res.status).toBe(503);
      expect(res.body.detail.error).toBe('mail_unavailable');
      expect(res.body.detail.message).toContain('npm run admin -- reset-password');
      const outbox = await noMail.api.get('/v1/dev/mail');
      expect(outbox.status).toBe(404);
      expect(outbox.body.detail.error).toBe('not_found');
    } finally {
      await noMail.close();
    }
  });
});
