import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { networkInterfaces } from 'node:os';
import { loadConfig } from '@sdx/config';
import { eventually, runAdmin, startTestStack, type TestStack } from '@sdx/testing';

/**
 * Issue 52 / extensions-3.md 5: outside production, without SMTP_URL, mail goes to a local
 * outbox that GET /v1/dev/mail lists (newest first, with its text) to a caller on loopback
 * only; password reset then works, EMAIL_VERIFICATION=1 is accepted; in production nothing
 * changes. `admin reset-password` and `admin verify-email` help a user without mail.
 */

interface DevMail {
  id: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  created_at: string;
}

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ env: { EMAIL_VERIFICATION: '1', APP_URL: 'http://localhost:3000' } });
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

async function mailsTo(email: string): Promise<DevMail[]> {
  const res = await stack.api.get('/v1/dev/mail');
  expect(res.status).toBe(200);
  return (res.body as DevMail[]).filter((mail) => mail.to === email);
}

const linkToken = (text: string, page: string) => new RegExp(`/console/${page}\\?token=([A-Za-z0-9_%-]+)`).exec(text)?.[1];

it('accepts EMAIL_VERIFICATION=1 without SMTP_URL outside production, and still refuses it in production', () => {
  expect(loadConfig({ NODE_ENV: 'development', EMAIL_VERIFICATION: '1' }).emailVerification).toBe(true);
  expect(loadConfig({ NODE_ENV: 'development' }).emailVerification).toBe(false);
  expect(loadConfig({ NODE_ENV: 'development' }).devMailDir).toEqual(expect.any(String));
  expect(loadConfig({ NODE_ENV: 'development', SMTP_URL: 'smtp://127.0.0.1:2525' }).devMailDir).toBeNull();
  expect(() => loadConfig({ NODE_ENV: 'production', EMAIL_VERIFICATION: '1', SECRETS_KEY: randomBytes(32).toString('base64') })).toThrow(
    /needs SMTP_URL/,
  );
  expect(loadConfig({ NODE_ENV: 'production', SECRETS_KEY: randomBytes(32).toString('base64') }).devMailDir).toBeNull();
});

it('sends the verification mail to the dev outbox; its link verifies the sign-up', async () => {
  const email = `dev.${randomBytes(4).toString('hex')}@example.com`;
  const signup = await stack.api.post('/v1/auth/signup', { body: { email, password: 'a long enough password', display_name: null } });
  expect(signup.status).toBe(202);
  const [mail] = await eventually(async () => {
    const mails = await mailsTo(email);
    return mails.length > 0 ? mails : undefined;
  }, 20_000);
  expect(mail.subject).toMatch(/verify/i);
  expect(mail.text).toContain('http://localhost:3000/console/verify?token=');
  expect(Date.parse(mail.created_at)).not.toBeNaN();
  const token = decodeURIComponent(linkToken(mail.text, 'verify')!);
  const verified = await stack.api.post('/v1/auth/verify', { body: { token, password: 'a long enough password' } });
  expect(verified.status).toBe(200);
  expect(verified.body.user.email).toBe(email);
});

it('resets a password through the dev outbox (no 503 mail_unavailable), newest mail first', async () => {
  // With EMAIL_VERIFICATION on, sign-up answers 202: the user exists, unverified.
  const email = `reset.${randomBytes(4).toString('hex')}@example.com`;
  expect((await stack.api.post('/v1/auth/signup', { body: { email, password: 'the first password', display_name: null } })).status).toBe(
    202,
  );
  for (let i = 0; i < 2; i++) {
    const asked = await stack.api.post('/v1/auth/password-reset', { body: { email } });
    expect(asked.status).toBe(202);
  }
  const resets = await eventually(async () => {
    const mails = (await mailsTo(email)).filter((mail) => /reset/i.test(mail.subject));
    return mails.length === 2 ? mails : undefined;
  }, 20_000);
  // Newest first.
  expect(resets[0].id > resets[1].id).toBe(true);
  expect(Date.parse(resets[0].created_at)).toBeGreaterThanOrEqual(Date.parse(resets[1].created_at));
  const token = decodeURIComponent(linkToken(resets[0].text, 'reset')!);
  expect((await stack.api.post('/v1/auth/password-reset/confirm', { body: { token, new_password: 'a brand new password' } })).status).toBe(
    204,
  );
  expect((await stack.api.post('/v1/auth/login', { body: { email, password: 'a brand new password' } })).status).toBe(200);
  // Used once: the same link again is refused.
  expect((await stack.api.post('/v1/auth/password-reset/confirm', { body: { token, new_password: 'yet another password' } })).status).toBe(
    410,
  );
});

it('answers only a caller on this machine: another address gets 404, whatever X-Forwarded-For says', async () => {
  const external = Object.values(networkInterfaces())
    .flat()
    .find((address) => address && address.family === 'IPv4' && !address.internal)?.address;
  expect(external).toBeDefined();
  const server: Server = (await import('node:http')).createServer(stack.app);
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  try {
    const { port } = server.address() as { port: number };
    const remote = await fetch(`http://${external}:${port}/v1/dev/mail`, { headers: { 'X-Forwarded-For': '127.0.0.1' } });
    expect(remote.status).toBe(404);
    expect(await remote.json()).toEqual({ detail: { error: 'not_found', message: 'No route for GET /v1/dev/mail.' } });
    const local = await fetch(`http://127.0.0.1:${port}/v1/dev/mail`);
    expect(local.status).toBe(200);
    expect(local.headers.get('cache-control')).toBe('no-store');
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

it('is not there when mail goes to SMTP_URL (nor in production, where devMailDir is null)', async () => {
  const smtpStack = await startTestStack({ env: { SMTP_URL: 'smtp://127.0.0.1:9' } });
  try {
    const res = await smtpStack.api.get('/v1/dev/mail');
    expect(res.status).toBe(404);
    expect(res.body.detail.error).toBe('not_found');
  } finally {
    await smtpStack.close();
  }
});

describe('admin CLI', () => {
  async function admin(...args: string[]): Promise<string> {
    const { stdout } = await runAdmin(args, {
      ...process.env,
      DATABASE_URL: stack.databaseUrl,
      LOG_LEVEL: 'silent',
      APP_URL: 'http://localhost:3000',
    });
    return stdout;
  }

  it('reset-password prints a one-time link that sets a new password; verify-email verifies; both audited', async () => {
    const email = `cli.${randomBytes(4).toString('hex')}@example.com`;
    expect((await stack.api.post('/v1/auth/signup', { body: { email, password: 'the first password', display_name: null } })).status).toBe(
      202,
    );
    // Unverified: sign-in is refused.
    expect((await stack.api.post('/v1/auth/login', { body: { email, password: 'the first password' } })).status).not.toBe(200);
    expect((await admin('verify-email', email)).trim()).toBe(`${email} is verified; its user can sign in.`);
    expect((await stack.api.post('/v1/auth/login', { body: { email, password: 'the first password' } })).status).toBe(200);

    const printed = JSON.parse(await admin('reset-password', email, '--json')) as { email: string; reset_url: string; expires_at: string };
    expect(printed.reset_url).toMatch(/^http:\/\/localhost:3000\/console\/reset\?token=/);
    expect(Date.parse(printed.expires_at) - Date.now()).toBeGreaterThan(50 * 60_000);
    const token = decodeURIComponent(new URL(printed.reset_url).searchParams.get('token')!);
    expect((await stack.api.post('/v1/auth/password-reset/confirm', { body: { token, new_password: 'set by the link' } })).status).toBe(
      204,
    );
    expect(
      (await stack.api.post('/v1/auth/password-reset/confirm', { body: { token, new_password: 'set by the link again' } })).status,
    ).toBe(410);
    expect((await stack.api.post('/v1/auth/login', { body: { email, password: 'set by the link' } })).status).toBe(200);

    const user = await stack.runtime.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow();
    const audits = await stack.runtime.db
      .selectFrom('audit_events')
      .select(['action', 'actor_type', 'actor_id'])
      .where('target_id', '=', user.id)
      .orderBy('created_at')
      .execute();
    expect(audits).toEqual(
      expect.arrayContaining([
        { action: 'user.email_verified', actor_type: 'system', actor_id: 'admin-cli' },
        { action: 'user.password_reset_link_issued', actor_type: 'system', actor_id: 'admin-cli' },
      ]),
    );
  }, 60_000);

  it('refuses an unknown email with exit 2 and prints no link', async () => {
    const failure = await admin('reset-password', 'nobody@example.com').catch(
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(typeof failure).toBe('object');
    expect((failure as { code: number }).code).toBe(2);
    expect((failure as { stdout: string }).stdout).not.toContain('token=');
    expect((failure as { stderr: string }).stderr).toContain('no user nobody@example.com');
  }, 30_000);
});
