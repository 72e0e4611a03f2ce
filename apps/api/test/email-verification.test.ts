import { cookieFrom, startSmtpCatcher, startTestStack, type TestStack } from '@sdx/testing';

/** extensions-2.md 2: sign-up with email verification, through HTTP and a real SMTP server on loopback. */
type Catcher = Awaited<ReturnType<typeof startSmtpCatcher>>;
let smtp: Catcher;
let stack: TestStack;
const clock = { offsetMs: 0, now: () => new Date(Date.now() + clock.offsetMs) };
const APP_URL = 'http://console.test';

beforeAll(async () => {
  smtp = await startSmtpCatcher();
  stack = await startTestStack({ clock, env: { SMTP_URL: smtp.url, APP_URL, NEW_WORKSPACE_CREDITS: '777' } });
});
afterAll(async () => {
  await stack.close();
  await smtp.close();
});
beforeEach(() => {
  clock.offsetMs = 0;
});

let seq = 0;
const newEmail = () => `verify${++seq}.${Date.now().toString(36)}@example.com`;
const PASSWORD = 'correct horse battery';
const signUp = (email: string, password = PASSWORD) => stack.api.post('/v1/auth/signup', { body: { email, password } });
const verify = (token: string, password = PASSWORD) => stack.api.post('/v1/auth/verify', { body: { token, password } });
const mailsTo = (to: string) => smtp.messages.filter((m) => m.to === to);

/** The token of the newest verification link mailed to the address. */
async function verificationToken(to: string, count = 1): Promise<string> {
  await smtp.waitFor((m) => m.to === to && m.subject !== undefined && mailsTo(to).length >= count, 10_000);
  const mail = mailsTo(to).at(-1)!;
  const match = /\/console\/verify\?token=([A-Za-z0-9_%-]+)/.exec(mail.text);
  if (!match) throw new Error(`no verification link in: ${mail.text}`);
  return decodeURIComponent(match[1]);
}

describe('sign-up with EMAIL_VERIFICATION on', () => {
  it('answers 202 {verification_required} and no session, for a new email and a taken one alike', async () => {
    const email = newEmail();
    const fresh = await signUp(email);
    const token = await verificationToken(email);
    expect(mailsTo(email)[0].html).toContain(`${APP_URL}/console/verify?token=`);
    expect((await verify(token)).status).toBe(200);
    const taken = await signUp(email.toUpperCase(), 'another password entirely');
    for (const res of [fresh, taken]) {
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ verification_required: true });
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    // The owner of the taken email is told that someone tried, with no link that signs in.
    await smtp.waitFor(() => mailsTo(email).length >= 2, 10_000);
    const attempt = mailsTo(email)[1];
    expect(attempt.text).not.toContain('/console/verify?token=');
    expect(attempt.text.toLowerCase()).toContain('sign up');
    // And the account keeps its password.
    expect((await stack.api.post('/v1/auth/login', { body: { email, password: 'another password entirely' } })).status).toBe(401);
    expect((await stack.api.post('/v1/auth/login', { body: { email, password: PASSWORD } })).status).toBe(200);
  });

  it('does not let a squatter who signed up with an address first keep its owner out, nor get in (extensions-3.md 1)', async () => {
    const email = newEmail();
    const SQUATTER = 'the squatter password';
    const OWNER = 'the owner password!';
    await signUp(email, SQUATTER);
    const squattersLink = await verificationToken(email);
    // The owner signs up with their own password; the mailbox now holds two links.
    await signUp(email, OWNER);
    const ownersLink = await verificationToken(email, 2);
    expect(ownersLink).not.toBe(squattersLink);

    // No password is usable before the email is verified: the squatter's gets no session.
    const early = await stack.api.post('/v1/auth/login', { body: { email, password: SQUATTER } });
    expect([early.status, early.body.detail.error]).toEqual([403, 'email_not_verified']);
    expect(early.headers['set-cookie']).toBeUndefined();
    expect((await stack.api.post('/v1/auth/login', { body: { email, password: OWNER } })).status).toBe(401);

    // The owner clicks the squatter's link: their own password verifies nothing, and the link stays usable.
    const wrong = await verify(squattersLink, OWNER);
    expect([wrong.status, wrong.body.detail.error]).toEqual([401, 'invalid_credentials']);
    expect(wrong.headers['set-cookie']).toBeUndefined();
    const user = await stack.runtime.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirstOrThrow();
    expect(user.email_verified_at).toBeNull();
    const personal = await stack.runtime.db
      .selectFrom('workspaces')
      .selectAll()
      .where('personal_user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(personal.monthly_quota).toBe(0);
    const unused = await stack.runtime.db
      .selectFrom('auth_tokens')
      .select('used_at')
      .where('user_id', '=', user.id)
      .where('purpose', '=', 'verify_email')
      .execute();
    expect(unused.map((t) => t.used_at)).toEqual([null, null]);

    // The owner's own link with the owner's own password: verified, signed in, the credits given.
    const verified = await verify(ownersLink, OWNER);
    expect(verified.status).toBe(200);
    expect(verified.body.user.email).toBe(email);
    const cookie = cookieFrom(verified)!;
    expect((await stack.api.get('/v1/usage/current', { headers: { Cookie: cookie } })).body.credit_limit).toBe(777);

    // The squatter's password never signs in, and their link is dead, with their password too.
    const squatter = await stack.api.post('/v1/auth/login', { body: { email, password: SQUATTER } });
    expect([squatter.status, squatter.body.detail.error]).toEqual([401, 'invalid_credentials']);
    const dead = await verify(squattersLink, SQUATTER);
    expect([dead.status, dead.body.detail.error]).toEqual([410, 'verification_invalid']);
    expect((await stack.api.post('/v1/auth/login', { body: { email, password: OWNER } })).status).toBe(200);
    // And the owner's link works once.
    expect((await verify(ownersLink, OWNER)).status).toBe(410);
  });

  it("ends the owner's pending link when the squatter's link is verified with the squatter's password", async () => {
    // The other order: the squatter verifies first (they cannot read the mailbox, but say the link leaked).
    const email = newEmail();
    await signUp(email, 'the squatter password');
    const squattersLink = await verificationToken(email);
    await signUp(email, 'the owner password!');
    const ownersLink = await verificationToken(email, 2);
    expect((await verify(squattersLink, 'the squatter password')).status).toBe(200);
    expect((await verify(ownersLink, 'the owner password!')).status).toBe(410);
  });

  it('counts a wrong password at verification as a failed sign-in: 429 past the limit, for the right one too', async () => {
    const email = newEmail();
    await signUp(email);
    const token = await verificationToken(email);
    for (let i = 0; i < 10; i++) expect((await verify(token, `wrong password ${i}`)).status).toBe(401);
    const limited = await verify(token, PASSWORD);
    expect([limited.status, limited.body.detail.error]).toEqual([429, 'rate_limit_exceeded']);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    const login = await stack.api.post('/v1/auth/login', { body: { email, password: PASSWORD } });
    expect(login.status).toBe(429);
  });

  it('takes as long for a taken email as for a new one (the same timing class)', async () => {
    const taken = newEmail();
    await signUp(taken);
    const timeOf = async (email: string) => {
      const started = process.hrtime.bigint();
      const res = await signUp(email);
      expect(res.status).toBe(202);
      return Number(process.hrtime.bigint() - started) / 1e6;
    };
    const fresh: number[] = [];
    const again: number[] = [];
    for (let i = 0; i < 6; i++) {
      fresh.push(await timeOf(newEmail()));
      again.push(await timeOf(taken));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    // Both do a password hash and one transaction that writes a mail: within a factor of 2.
    const ratio = median(again) / median(fresh);
    expect(ratio).toBeGreaterThan(0.5);
    expect(ratio).toBeLessThan(2);
  });

  it('gives no credits and no sign-in before verification; the link verifies, signs in and gives NEW_WORKSPACE_CREDITS once', async () => {
    const email = newEmail();
    await signUp(email);
    const user = await stack.runtime.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirstOrThrow();
    expect(user.email_verified_at).toBeNull();
    const personal = await stack.runtime.db
      .selectFrom('workspaces')
      .selectAll()
      .where('personal_user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(personal.monthly_quota).toBe(0);

    const early = await stack.api.post('/v1/auth/login', { body: { email, password: PASSWORD } });
    expect(early.status).toBe(403);
    expect(early.body.detail.error).toBe('email_not_verified');
    const wrong = await stack.api.post('/v1/auth/login', { body: { email, password: 'not the password' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.detail.error).toBe('invalid_credentials');

    const token = await verificationToken(email);
    const verified = await verify(token);
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({
      user: { email, two_factor_enabled: false },
      workspaces: [{ kind: 'personal', role: 'owner', require_two_factor: false }],
      csrf_token: expect.any(String),
    });
    const cookie = cookieFrom(verified)!;
    expect(cookie).toBeTruthy();
    const usage = await stack.api.get('/v1/usage/current', { headers: { Cookie: cookie } });
    expect(usage.body).toMatchObject({ credit_limit: 777, credits_remaining: 777 });

    // Single use: the same token again is 410, and the allowance is not given twice.
    const again = await verify(token);
    expect(again.status).toBe(410);
    expect(again.body.detail.error).toBe('verification_invalid');
    const unknown = await verify('no-such-token');
    expect(unknown.status).toBe(410);
    // A body without the password is refused before anything is looked at.
    expect((await stack.api.post('/v1/auth/verify', { body: { token } })).status).toBe(422);
    const after = await stack.api.get('/v1/usage/current', { headers: { Cookie: cookie } });
    expect(after.body.credit_limit).toBe(777);

    const login = await stack.api.post('/v1/auth/login', { body: { email, password: PASSWORD } });
    expect(login.status).toBe(200);
    const audit = await stack.runtime.db.selectFrom('audit_events').select('action').where('workspace_id', '=', personal.id).execute();
    expect(audit.map((a) => a.action).sort()).toEqual(['user.email_verified', 'user.signed_up']);
  });

  it('refuses a link older than 24 hours (410 verification_invalid)', async () => {
    const email = newEmail();
    await signUp(email);
    const token = await verificationToken(email);
    clock.offsetMs = 24 * 3600_000 + 60_000;
    const res = await verify(token);
    expect(res.status).toBe(410);
    expect(res.body.detail.error).toBe('verification_invalid');
    clock.offsetMs = 23 * 3600_000;
    const fresh = await verify(token);
    expect(fresh.status).toBe(200);
  });

  it('resends: 202 for any email, a new link only to an account waiting for one, at most 5 mails an hour', async () => {
    const unknown = await stack.api.post('/v1/auth/verify/resend', { body: { email: newEmail() } });
    expect(unknown.status).toBe(202);
    expect(unknown.body).toEqual({ accepted: true });

    const email = newEmail();
    await signUp(email);
    await verificationToken(email);
    for (let i = 0; i < 6; i++) {
      const res = await stack.api.post('/v1/auth/verify/resend', { body: { email: `  ${email.toUpperCase()} ` } });
      expect(res.status).toBe(202);
    }
    await smtp.waitFor(() => mailsTo(email).length >= 5, 10_000);
    // Let any sixth mail arrive before counting.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(mailsTo(email)).toHaveLength(5);
    // Every link mailed works until one is used; then the others are retired.
    const links = mailsTo(email).map((m) => decodeURIComponent(/token=([A-Za-z0-9_%-]+)/.exec(m.text)![1]));
    expect(new Set(links).size).toBe(5);
    // Every resent link carries the sign-up's password.
    expect((await verify(links[2], 'not the sign-up password')).status).toBe(401);
    expect((await verify(links[2])).status).toBe(200);
    expect((await verify(links[4])).status).toBe(410);
  });

  it('keeps no clear token in the outbox once the mail is sent', async () => {
    const email = newEmail();
    await signUp(email);
    const token = await verificationToken(email);
    const rows = await stack.runtime.db.selectFrom('mail_outbox').selectAll().where('recipient', '=', email).execute();
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain(token);
  });
});

describe('sign-ups per client address', () => {
  it('allows SIGNUP_LIMIT_PER_HOUR, then 429 rate_limit_exceeded with Retry-After', async () => {
    const limited = await startTestStack({ env: { SIGNUP_LIMIT_PER_HOUR: '3' } });
    try {
      for (let i = 0; i < 3; i++)
        expect((await limited.api.post('/v1/auth/signup', { body: { email: newEmail(), password: PASSWORD } })).status).toBe(201);
      const refused = await limited.api.post('/v1/auth/signup', { body: { email: newEmail(), password: PASSWORD } });
      expect(refused.status).toBe(429);
      expect(refused.body.detail).toMatchObject({ error: 'rate_limit_exceeded', retry_after: expect.any(Number) });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3000);
    } finally {
      await limited.close();
    }
  });
});

describe('emails in one form', () => {
  it('compares after NFKC and lower-casing in sign-up, sign-in and its limiter', async () => {
    const plain = await startTestStack();
    try {
      const res = await plain.api.post('/v1/auth/signup', { body: { email: 'Mary@Example.COM', password: PASSWORD } });
      expect(res.status).toBe(201);
      expect(res.body.user.email).toBe('mary@example.com');
      const taken = await plain.api.post('/v1/auth/signup', { body: { email: 'MARY@example.com', password: PASSWORD } });
      expect(taken.body.detail.error).toBe('email_taken');
      // Fullwidth letters are NFKC-equal to ASCII ones.
      expect((await plain.api.post('/v1/auth/login', { body: { email: 'Ｍａｒｙ@EXAMPLE.com', password: PASSWORD } })).status).toBe(200);
      // Failures under two spellings count against one email.
      for (let i = 0; i < 10; i++) {
        const spelling = i % 2 ? 'mary@example.com' : 'ＭＡＲＹ@example.com';
        expect((await plain.api.post('/v1/auth/login', { body: { email: spelling, password: 'wrong password' } })).status).toBe(401);
      }
      expect((await plain.api.post('/v1/auth/login', { body: { email: 'Mary@Example.com', password: PASSWORD } })).status).toBe(429);
    } finally {
      await plain.close();
    }
  });
});
