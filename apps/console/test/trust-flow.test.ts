import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startSmtpCatcher, startTestStack, type TestStack } from '@sdx/testing';
import { type AxeViolation, launchBrowser, seriousA11yViolations, heading, newPageIn, screenshot } from './browser';

/**
 * extensions-2.md 2 in the browser: sign-up with email verification, the mailed link, two-factor
 * sign-in (TOTP) turned on and used, and a password reset, against the real service mailing a
 * real SMTP server on loopback. Each step's screenshot goes to docs/console/trust/ (the pictures
 * of docs/console/trust.md) with SCREENSHOTS=1, and each step's page passes axe.
 */
type Catcher = Awaited<ReturnType<typeof startSmtpCatcher>>;
type Mail = Catcher['messages'][number];
let smtp: Catcher;
let stack: TestStack;
let server: Server;
let base: string;
let browser: Browser;
const contexts: BrowserContext[] = [];
const SHOTS = path.resolve(__dirname, '..', '..', '..', 'docs', 'console', 'trust');
const violations: Record<string, AxeViolation[]> = {};

beforeAll(async () => {
  smtp = await startSmtpCatcher();
  // The mails' links are built on APP_URL, so the port is taken before the service starts.
  server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  stack = await startTestStack({ env: { SMTP_URL: smtp.url, APP_URL: base, EMAIL_VERIFICATION: '1' } });
  server.on('request', stack.app);
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
  await stack?.close();
  await smtp?.close();
});

let seq = 0;
const newEmail = (who: string) => `${who}${++seq}.${Date.now().toString(36)}@example.com`;
const PASSWORD = 'correct horse battery';

const newPage = () => newPageIn(browser, contexts);

/** A step of the flow: its screenshot for the docs, and axe's serious findings kept for the end. */
async function step(page: Page, name: string): Promise<void> {
  await page.waitForLoadState('networkidle');
  const found = await seriousA11yViolations(page);
  if (found.length > 0) violations[name] = found;
  await screenshot(page, path.join(SHOTS, `${name}.png`));
}

/** A signed-in browser's headers for the API: its session cookie and the session's CSRF token. */
async function browserSession(page: Page): Promise<Record<string, string>> {
  const cookie = (await page.context().cookies()).find((c) => c.name === 'sdx_session');
  if (!cookie) throw new Error('the browser has no session cookie');
  const session = await stack.api.get('/v1/auth/session', { headers: { Cookie: `sdx_session=${cookie.value}` } });
  return { Cookie: `sdx_session=${cookie.value}`, 'X-CSRF-Token': session.body.csrf_token };
}

/** The link of the newest mail to `to` whose text holds `/console/<kind>?token=`. */
async function mailedLink(to: string, kind: 'verify' | 'reset', after = 0): Promise<string> {
  const pattern = new RegExp(`https?://[^\\s"'<>]+/console/${kind}\\?token=[A-Za-z0-9_%.-]+`);
  const matching = () => smtp.messages.filter((m: Mail) => m.to === to && pattern.test(m.text));
  await smtp.waitFor((m: Mail) => m.to === to && pattern.test(m.text) && matching().length > after, 10_000);
  const mail = matching().at(-1)!;
  return pattern.exec(mail.text)![0];
}

/** RFC 6238 TOTP (SHA-1, 6 digits, 30 s) of a base32 secret: what an authenticator app shows. */
function totp(secret: string, at = Date.now()): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const char of secret.replace(/[\s=]/g, '').toUpperCase()) bits += alphabet.indexOf(char).toString(2).padStart(5, '0');
  const key = Buffer.from((bits.match(/.{8}/g) ?? []).map((byte) => parseInt(byte, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(at / 30_000)));
  const hmac = createHmac('sha1', key).update(counter).digest();
  const offset = hmac[hmac.length - 1] & 0x0f;
  const code = (hmac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000;
  return code.toString().padStart(6, '0');
}

it('computes the RFC 6238 test vector (SHA-1, 6 digits) as an authenticator app does', () => {
  // RFC 6238 appendix B: the ASCII secret "12345678901234567890", at 59 s: 94287082 (8 digits) → 287082.
  expect(totp('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ', 59_000)).toBe('287082');
  expect(totp('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ', 1_111_111_109_000)).toBe('081804');
});

describe('the console on the open internet', () => {
  const email = newEmail('ada');
  let secret = '';
  let recoveryCodes: string[] = [];
  let signedIn: Page;
  let owner: Page;
  const NEW_PASSWORD = 'a much longer passphrase';

  it('signs up, shows "check your inbox" with a resend, and the mailed link signs the user in', async () => {
    const page = await newPage();
    await page.goto(`${base}/console/signup`);
    await heading(page, 'Create an account');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await step(page, '01-sign-up');
    await page.getByRole('button', { name: 'Create account' }).click();

    await heading(page, 'Check your inbox');
    expect(await page.getByTestId('check-inbox').textContent()).toContain(email);
    expect(await page.getByText('spam').count()).toBeGreaterThan(0);
    await mailedLink(email, 'verify');
    await page.getByRole('button', { name: 'Resend the link' }).click();
    await page.getByRole('status').filter({ hasText: 'A new link is on its way' }).waitFor();
    await step(page, '02-check-your-inbox');
    const link = await mailedLink(email, 'verify', 1);
    expect(link.startsWith(`${base}/console/verify?token=`)).toBe(true);

    // The mail as its reader sees it.
    const mail = smtp.messages.filter((m: Mail) => m.to === email).at(-1)!;
    const reader = await newPage();
    await reader.setContent(mail.html);
    await screenshot(reader, path.join(SHOTS, '03-verification-mail.png'));

    // Signing in before verifying: the same "check your inbox", with its resend.
    const early = await newPage();
    await early.goto(`${base}/console/`);
    await early.getByLabel('Email').fill(email);
    await early.getByLabel('Password').fill(PASSWORD);
    await early.getByRole('button', { name: 'Sign in' }).click();
    await heading(early, 'Check your inbox');
    expect(await early.getByText('Your email is not verified yet').count()).toBe(1);
    expect(await early.getByRole('button', { name: 'Resend the link' }).count()).toBe(1);

    // The link asks for the password of the sign-up that sent it.
    await page.goto(link);
    await heading(page, 'Verify your email');
    expect(page.url()).toBe(`${base}/console/verify`);
    await page.getByLabel('Password').fill(PASSWORD);
    await step(page, '04-verify-asks-for-the-password');
    await page.getByRole('button', { name: 'Verify and sign in' }).click();
    await heading(page, 'Overview');
    expect(await page.getByText(email).count()).toBeGreaterThan(0);
    await step(page, '04-verified-and-signed-in');

    // The link works once.
    const again = await newPage();
    await again.goto(link);
    await again.getByLabel('Password').fill(PASSWORD);
    await again.getByRole('button', { name: 'Verify and sign in' }).click();
    await heading(again, 'This link no longer works');
    expect(await again.getByRole('button', { name: 'Send a new link' }).count()).toBe(1);
    signedIn = page;
  });

  it('refuses to require two-factor sign-in of a workspace while the owner has none', async () => {
    const page = signedIn;
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Settings' }).click();
    await heading(page, 'Settings');
    await page.getByLabel('Require two-factor sign-in').click();
    const alert = page.getByRole('alert').filter({ hasText: 'Two-factor sign-in required' });
    await alert.waitFor();
    expect(await alert.textContent()).toContain('Turn on two-factor sign-in on your own account first');
    expect(await page.getByLabel('Require two-factor sign-in').isChecked()).toBe(false);
    await step(page, '05-require-needs-your-own');
  });

  it('turns two-factor sign-in on with a QR code drawn in the page, and shows the ten recovery codes once', async () => {
    const page = signedIn;
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Security' }).click();
    await heading(page, 'Security');
    await page.getByRole('button', { name: 'Turn on' }).click();
    const qr = page.getByTestId('totp-qr');
    await qr.waitFor();
    expect(await qr.getAttribute('src')).toMatch(/^data:image\/png;base64,/);
    secret = ((await page.getByTestId('totp-secret').textContent()) ?? '').replace(/\s+/g, '');
    expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
    await step(page, '06-two-factor-setup');

    // A wrong code first: not one of the codes the service accepts now.
    const valid = new Set([-1, 0, 1].map((k) => totp(secret, Date.now() + k * 30_000)));
    const wrong = ['000000', '111111', '222222', '333333'].find((c) => !valid.has(c))!;
    await page.getByLabel('Code from the app').fill(wrong);
    await page.getByRole('button', { name: 'Turn on two-factor sign-in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Wrong code' }).waitFor();

    await page.getByLabel('Code from the app').fill(totp(secret));
    await page.getByRole('button', { name: 'Turn on two-factor sign-in' }).click();
    const shown = page.getByTestId('recovery-codes');
    await shown.waitFor();
    recoveryCodes = await shown.locator('ol li code').allTextContents();
    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);
    expect(await shown.textContent()).toContain('This is the only time they are shown');
    for (const name of ['Copy the codes', 'Download the codes']) expect(await shown.getByRole('button', { name }).isVisible()).toBe(true);
    await step(page, '07-recovery-codes');
    await page.getByRole('button', { name: 'I saved them' }).click();
    await page.getByTestId('two-factor-status').filter({ hasText: 'On.' }).waitFor();
    await page.reload();
    await heading(page, 'Security');
    await page.getByTestId('two-factor-status').filter({ hasText: 'On.' }).waitFor();
    expect(await page.content()).not.toContain(recoveryCodes[0]);

    // Now the owner may require it of the workspace.
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Settings' }).click();
    await heading(page, 'Settings');
    await page.getByLabel('Require two-factor sign-in').click();
    await page.getByRole('status').filter({ hasText: 'Two-factor sign-in is now required here.' }).waitFor();
    expect(await page.getByLabel('Require two-factor sign-in').isChecked()).toBe(true);
  });

  it('signs out, and signing in asks for the code after the password; a wrong code is said to be wrong', async () => {
    const page = signedIn;
    // Signed out on the overview, so that signing in comes back to it.
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Overview' }).click();
    await heading(page, 'Overview');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await heading(page, 'Sign in');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading(page, 'Enter your code');
    await step(page, '08-code-step');

    const valid = new Set([-1, 0, 1, 2].map((k) => totp(secret, Date.now() + k * 30_000)));
    await page.getByLabel('Code').fill(['123456', '654321', '999999'].find((c) => !valid.has(c))!);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'Wrong code' });
    await alert.waitFor();
    await step(page, '09-wrong-code');

    // A code is taken once per time step, and turning it on used this step's: the next step's
    // code (inside the ±1 step window) is one the app shows within 30 s.
    await page.getByLabel('Code').fill(totp(secret, Date.now() + 30_000));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading(page, 'Overview');
    await step(page, '10-signed-in-with-two-factor');
  });

  it('resets a forgotten password by mail; every session ends, and a recovery code stands in for the app', async () => {
    const page = await newPage();
    await page.goto(`${base}/console/`);
    await heading(page, 'Sign in');
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await heading(page, 'Reset your password');
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Mail me a link' }).click();
    await heading(page, 'Check your inbox');
    expect(await page.getByTestId('reset-requested').textContent()).toContain(email);
    await step(page, '11-reset-requested');

    const link = await mailedLink(email, 'reset');
    expect(link.startsWith(`${base}/console/reset?token=`)).toBe(true);
    await page.goto(link);
    await heading(page, 'Set a new password');
    await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await page.getByLabel('New password again').fill('not the same passphrase');
    await page.getByRole('button', { name: 'Set the password' }).click();
    await page.getByText('The two passwords differ.').waitFor();
    await page.getByLabel('New password again').fill(NEW_PASSWORD);
    await step(page, '12-new-password');
    await page.getByRole('button', { name: 'Set the password' }).click();
    await heading(page, 'Password set');
    await step(page, '13-password-set');

    // The session signed in with two-factor sign-in above ended with the reset.
    await signedIn.reload();
    await heading(signedIn, 'Sign in');

    // The link works once.
    const again = await newPage();
    await again.goto(link);
    await again.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await again.getByLabel('New password again').fill(NEW_PASSWORD);
    await again.getByRole('button', { name: 'Set the password' }).click();
    await heading(again, 'This link no longer works');

    await page.getByRole('link', { name: 'Sign in' }).click();
    await heading(page, 'Sign in');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading(page, 'Enter your code');
    await page.getByLabel('Code').fill(recoveryCodes[0]);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading(page, 'Overview');
    owner = page;
  });

  it('asks, when the password changes, whether every API key the user made is revoked too', async () => {
    const page = owner;
    const headers = await browserSession(page);
    const key = await stack.api.post('/v1/keys', { headers, body: { name: 'made before the theft' } });
    expect(key.status).toBe(201);
    await page.goto(`${base}/console/security`);
    await heading(page, 'Security');
    await page.getByLabel('Current password').fill(NEW_PASSWORD);
    await page.getByLabel('New password').fill('yet another long passphrase');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByTestId('revoke-question').waitFor();
    await step(page, '14-password-change-asks');
    await page.getByRole('button', { name: 'Change password and revoke my keys' }).click();
    await page.getByRole('status').filter({ hasText: 'Every API key you created is revoked.' }).waitFor();
    const account = await stack.api.get('/v1/account', { headers: { 'X-API-Key': key.body.api_key } });
    expect(account.status).toBe(401);
  });

  it('tells a member of a workspace that requires two-factor sign-in, and the way to turn it on stays open', async () => {
    const headers = await browserSession(owner);
    const team = await stack.api.post('/v1/workspaces', { headers, body: { name: 'Secure team' } });
    expect(team.status).toBe(201);
    const bob = newEmail('bob');
    const invitation = await stack.api.post(`/v1/workspaces/${team.body.id}/invitations`, {
      headers,
      body: { email: bob, role: 'member' },
    });
    expect(invitation.status).toBe(201);

    const page = await newPage();
    await page.goto(`${base}/console/signup`);
    await page.getByLabel('Email').fill(bob);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await heading(page, 'Check your inbox');
    await page.goto(await mailedLink(bob, 'verify'));
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Verify and sign in' }).click();
    await heading(page, 'Overview');
    await page.goto(`${base}/console/invitations/accept?token=${encodeURIComponent(invitation.body.token)}`);
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await heading(page, 'Overview');

    const required = await stack.api.patch(`/v1/workspaces/${team.body.id}`, { headers, body: { require_two_factor: true } });
    expect(required.status).toBe(200);
    await page.getByLabel('Workspace').selectOption(team.body.id);
    const notice = page.getByTestId('two-factor-required');
    await notice.waitFor();
    expect(await notice.textContent()).toContain('Secure team requires two-factor sign-in');
    await step(page, '15-two-factor-required');
    await notice.getByRole('link', { name: /security settings/ }).click();
    await heading(page, 'Security');
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByTestId('totp-qr').waitFor();
  });

  it('found no serious or critical accessibility violation on any step', () => {
    expect(violations).toEqual({});
  });
});
