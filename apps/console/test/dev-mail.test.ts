import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext } from 'playwright-core';
import { startTestStack, type TestStack } from '@sdx/testing';
import { heading, launchBrowser, newPageIn, seriousA11yViolations } from './browser';

/**
 * Issue 52 in the browser: `npm start` on a laptop has no mail server, yet sign-up with
 * EMAIL_VERIFICATION=1 works end to end: "check your inbox" points to the local outbox, whose
 * page lists the mail and opens its link, which verifies the email and opens the console.
 */
let stack: TestStack;
let server: Server;
let base: string;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  stack = await startTestStack({ env: { APP_URL: base, EMAIL_VERIFICATION: '1' } });
  server.on('request', stack.app);
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  for (const context of contexts) await context.close().catch(() => undefined);
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
  await stack?.close();
});

it('signs up without a mail server: the local outbox lists the verification mail and its link opens the console', async () => {
  const email = `outbox.${Date.now().toString(36)}@example.com`;
  const page = await newPageIn(browser, contexts);
  await page.goto(`${base}/console/signup`);
  await heading(page, 'Create an account');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password', { exact: true }).fill('correct horse battery');
  await page.getByRole('button', { name: 'Create account' }).click();
  await heading(page, 'Check your inbox');
  await page.getByTestId('dev-outbox-hint').getByRole('link', { name: 'local outbox' }).click();

  await heading(page, 'Local mail');
  const mail = page.getByTestId('dev-mail').locator('li').filter({ hasText: email }).first();
  await mail.waitFor({ timeout: 20_000 });
  expect(await seriousA11yViolations(page)).toEqual([]);
  const link = mail.getByRole('link', { name: /\/console\/verify\?token=/ });
  expect(await link.getAttribute('href')).toMatch(new RegExp(`^${base}/console/verify\\?token=`));
  await link.click();
  // The verify page asks for the password of the sign-up that sent the link.
  await heading(page, 'Verify your email');
  await page.getByLabel('Password').fill('correct horse battery');
  await page.getByRole('button', { name: 'Verify and sign in' }).click();
  // Verified and signed in: the console's overview of the personal workspace.
  await page.waitForURL(/\/console\/w\/ws_/, { timeout: 20_000 });
  const user = await stack.runtime.db.selectFrom('users').select('email_verified_at').where('email', '=', email).executeTakeFirstOrThrow();
  expect(user.email_verified_at).not.toBeNull();
}, 90_000);
