import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startSmtpCatcher, startTestStack, type TestStack } from '@sdx/testing';
import { heading, launchBrowser, newPageIn, closeContexts } from './browser';

/**
 * extensions-3.md 1 in Chromium: the tokens of mailed links (verification, reset, invitation)
 * are never written to a log. index.html's boot script takes the token out of the address bar
 * before the page loads anything, so no request of the page names it, in its URL or its Referer;
 * and the API's access log, which writes every request's headers, is scanned for each token
 * after each flow. The verification page asks for the sign-up's password.
 */
type Catcher = Awaited<ReturnType<typeof startSmtpCatcher>>;
let smtp: Catcher;
let stack: TestStack;
let server: Server;
let base: string;
let browser: Browser;
const contexts: BrowserContext[] = [];
const logged: string[] = [];

beforeAll(async () => {
  smtp = await startSmtpCatcher();
  server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  stack = await startTestStack({
    env: { SMTP_URL: smtp.url, APP_URL: base, EMAIL_VERIFICATION: '1', LOG_LEVEL: 'info' },
    logDestination: { write: (line: string) => void logged.push(line) },
  });
  server.on('request', stack.app);
  browser = await launchBrowser();
}, 60_000);

// Each test opens its own pages: closed after it, they stop polling the service meanwhile.
afterEach(() => closeContexts(contexts));

afterAll(async () => {
  await closeContexts(contexts);
  await browser?.close();
  await new Promise((resolve) => server?.close(resolve));
  await stack?.close();
  await smtp?.close();
});

let seq = 0;
const newEmail = (who: string) => `${who}${++seq}.${Date.now().toString(36)}@example.com`;

/** The token of the newest `/console/<kind>?token=` link mailed to `to`. */
async function mailedToken(to: string, kind: 'verify' | 'reset'): Promise<string> {
  const pattern = new RegExp(`/console/${kind}\\?token=([A-Za-z0-9_%.-]+)`);
  await smtp.waitFor((m) => m.to === to && pattern.test(m.text), 10_000);
  return decodeURIComponent(pattern.exec(smtp.messages.filter((m) => m.to === to && pattern.test(m.text)).at(-1)!.text)![1]);
}

interface Seen {
  url: string;
  referer: string;
  navigation: boolean;
}

/** A page that records every request it makes, with its Referer as the browser sent it. */
async function recordingPage(): Promise<{ page: Page; seen: Seen[]; settled: () => Promise<void> }> {
  const page = await newPageIn(browser, contexts);
  const seen: Seen[] = [];
  const pending: Array<Promise<void>> = [];
  page.on('request', (req) => {
    pending.push(
      req
        .allHeaders()
        .then(
          (headers) =>
            void seen.push({
              url: req.url(),
              referer: headers.referer ?? '',
              navigation: req.isNavigationRequest() && req.frame() === page.mainFrame(),
            }),
        )
        .catch(() => undefined),
    );
  });
  return { page, seen, settled: async () => void (await Promise.all(pending)) };
}

/**
 * Nothing the flow did names the token: the page's requests (but the link itself, and `apiTakingToken`, the
 * API call whose documented query is the token, which the log redacts), their Referers, the address bar, and every log line.
 */
async function expectNoTrace(
  token: string,
  page: Page,
  seen: Seen[],
  settled: () => Promise<void>,
  link: string,
  apiTakingToken?: string,
): Promise<void> {
  await page.waitForLoadState('networkidle');
  await settled();
  const forms = [token, encodeURIComponent(token)];
  expect(forms.some((form) => page.url().includes(form))).toBe(false);
  const requests = seen.filter((s) => s.url !== link);
  // The page did load its assets and call the API (a check that saw nothing could not fail).
  expect(requests.filter((s) => s.url.includes('/console/assets/')).length).toBeGreaterThan(0);
  expect(requests.filter((s) => s.url.includes('/v1/')).length).toBeGreaterThan(0);
  const documented = (url: string) => apiTakingToken !== undefined && new URL(url).pathname === apiTakingToken;
  const carrying = requests.filter((s) => forms.some((form) => (s.url.includes(form) && !documented(s.url)) || s.referer.includes(form)));
  expect(carrying).toEqual([]);
  // And the referers the page sent name the page it became.
  expect(requests.some((s) => s.referer.startsWith(`${base}/console/`))).toBe(true);
  const text = logged.join('');
  expect(logged.length).toBeGreaterThan(0);
  expect(forms.filter((form) => text.includes(form))).toEqual([]);
}

describe('mailed links in the browser', () => {
  const password = 'the sign-up password';

  it('verify: the token leaves the address bar first; the page asks for the sign-up password; no log names the token', async () => {
    const email = newEmail('verify');
    expect((await stack.api.post('/v1/auth/signup', { body: { email, password } })).status).toBe(202);
    const token = await mailedToken(email, 'verify');
    const link = `${base}/console/verify?token=${encodeURIComponent(token)}`;
    const { page, seen, settled } = await recordingPage();
    await page.goto(link);
    await heading(page, 'Verify your email');
    expect(page.url()).toBe(`${base}/console/verify`);
    // Another password verifies nothing, and says why; the link stays usable.
    await page.getByLabel('Password').fill('not the sign-up password');
    await page.getByRole('button', { name: 'Verify and sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Wrong password' }).waitFor();
    // A reload keeps the token (the tab kept it), still out of the address bar.
    await page.reload();
    await heading(page, 'Verify your email');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Verify and sign in' }).click();
    await heading(page, 'Overview');
    await expectNoTrace(token, page, seen, settled, link);
    expect(seen.filter((s) => s.navigation).map((s) => s.url)).toEqual([link, `${base}/console/verify`]);
  });

  it('reset: the new password is set from a page whose token never reached a request or a log', async () => {
    const email = newEmail('reset');
    await stack.api.post('/v1/auth/signup', { body: { email, password } });
    expect((await stack.api.post('/v1/auth/verify', { body: { token: await mailedToken(email, 'verify'), password } })).status).toBe(200);
    expect((await stack.api.post('/v1/auth/password-reset', { body: { email } })).status).toBe(202);
    const token = await mailedToken(email, 'reset');
    const link = `${base}/console/reset?token=${encodeURIComponent(token)}`;
    const { page, seen, settled } = await recordingPage();
    await page.goto(link);
    await heading(page, 'Set a new password');
    expect(page.url()).toBe(`${base}/console/reset`);
    await page.getByLabel('New password', { exact: true }).fill('a brand new passphrase');
    await page.getByLabel('New password again').fill('a brand new passphrase');
    await page.getByRole('button', { name: 'Set the password' }).click();
    await heading(page, 'Password set');
    await expectNoTrace(token, page, seen, settled, link);
    expect((await stack.api.post('/v1/auth/login', { body: { email, password: 'a brand new passphrase' } })).status).toBe(200);
  });

  it('invitation: signed out, the link shows the invitation, the sign-in comes back to it, and it is accepted; no trace of its token', async () => {
    const owner = newEmail('owner');
    await stack.api.post('/v1/auth/signup', { body: { email: owner, password } });
    const signedIn = await stack.api.post('/v1/auth/verify', { body: { token: await mailedToken(owner, 'verify'), password } });
    const cookie = (signedIn.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
    const headers = { Cookie: cookie, 'X-CSRF-Token': signedIn.body.csrf_token as string };
    const team = await stack.api.post('/v1/workspaces', { headers, body: { name: 'Linked team' } });
    const invitee = newEmail('invitee');
    await stack.api.post('/v1/auth/signup', { body: { email: invitee, password } });
    expect((await stack.api.post('/v1/auth/verify', { body: { token: await mailedToken(invitee, 'verify'), password } })).status).toBe(200);
    const invitation = await stack.api.post(`/v1/workspaces/${team.body.id}/invitations`, {
      headers,
      body: { email: invitee, role: 'member' },
    });
    expect(invitation.status).toBe(201);
    const token = invitation.body.token as string;

    const link = `${base}/console/invitations/accept?token=${encodeURIComponent(token)}`;
    const { page, seen, settled } = await recordingPage();
    await page.goto(link);
    await heading(page, 'Sign in');
    await page.getByTestId('invitation-summary').filter({ hasText: 'Linked team' }).waitFor();
    expect(page.url()).toBe(`${base}/console/invitations/accept`);
    await page.getByLabel('Email').fill(invitee);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await heading(page, 'Overview');
    // The preview reads the invitation by its token in the query (GET /v1/invitations/preview?token=): the request the log must redact.
    expect(seen.some((s) => s.url.startsWith(`${base}/v1/invitations/preview?token=`))).toBe(true);
    await expectNoTrace(token, page, seen, settled, link, '/v1/invitations/preview');
    const members = await stack.api.get(`/v1/workspaces/${team.body.id}/members`, { headers });
    expect(JSON.stringify(members.body)).toContain(invitee);
  });
});
