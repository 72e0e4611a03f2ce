import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { logInUser, signUpUser, startTestStack, type SessionUser, type TestStack } from '@sdx/testing';
import { launchBrowser, screenshots, seriousA11yViolations, heading, newPageIn, closeContexts } from './browser';

/**
 * The console's OAuth consent page (extensions-2.md 3) in a real browser against the real
 * service: an agent's request goes through GET /oauth/authorize to /console/oauth/consent, the
 * person signs in there, picks the workspace and the role, and allows (the browser ends at the
 * client's loopback redirect URI with the code and state, and the code buys a token of that
 * workspace and role) or denies (the browser stays in the console). The grant is then listed
 * on the Keys page as an OAuth app, and revoked there.
 */
let stack: TestStack;
let server: Server;
let base: string;
let client: Server;
let clientBase: string;
/** The paths (with their query) the loopback client was sent to. */
const callbacks: string[] = [];
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  // The authorization server names the console's consent page on APP_URL: the port is taken first.
  server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  stack = await startTestStack({ env: { APP_URL: base } });
  server.on('request', stack.app);
  // The agent's redirect URI: a loopback page, as a desktop agent would listen on.
  client = createServer((req, res) => {
    callbacks.push(req.url ?? '');
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html lang="en"><title>Agent</title><h1>Connected</h1></html>');
  });
  await new Promise<void>((resolve) => client.listen(0, '127.0.0.1', resolve));
  clientBase = `http://127.0.0.1:${(client.address() as AddressInfo).port}`;
  browser = await launchBrowser();
}, 60_000);

// Each test opens its own pages: closed after it, they stop polling the service meanwhile.
afterEach(() => closeContexts(contexts));

afterAll(async () => {
  await closeContexts(contexts);
  await browser?.close();
  await new Promise((resolve) => client?.close(resolve));
  await new Promise((resolve) => server?.close(resolve));
  await stack?.close();
});

const PASSWORD = 'correct horse battery';

const newPage = () => newPageIn(browser, contexts);

/** A public client registered as an agent does (RFC 7591), with a loopback redirect URI. */
async function registerClient(name: string): Promise<{ clientId: string; redirectUri: string }> {
  const redirectUri = `${clientBase}/callback`;
  const res = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      client_name: name,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }),
  });
  const body = (await res.json()) as { client_id?: string };
  if (res.status !== 201 || !body.client_id) throw new Error(`registration answered ${res.status}: ${JSON.stringify(body)}`);
  return { clientId: body.client_id, redirectUri };
}

/** An authorization request with PKCE S256, as an agent sends the browser: its URL and the verifier kept for the token. */
function authorization(clientId: string, redirectUri: string, state: string): { url: string; verifier: string } {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
    resource: `${base}/mcp`,
  });
  return { url: `${base}/oauth/authorize?${query.toString()}`, verifier };
}

/** The consent page, reached signed out: the sign-in first, then the page with its query intact. */
async function signInOnConsent(page: Page, user: SessionUser, clientName: string): Promise<void> {
  await page.waitForURL(/\/console\/oauth\/consent\?/);
  await heading(page, 'Sign in');
  expect(await page.getByTestId('consent-sign-in').textContent()).toContain(clientName);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await heading(page, 'Connect an application');
}

async function roleOptions(page: Page): Promise<string[]> {
  return page.getByLabel('Role').locator('option').allTextContents();
}

describe('console: OAuth consent', () => {
  it('signs in on the consent page, limits the roles to the user’s own, allows, and the browser ends at the redirect URI with the code and state; the grant is an OAuth app on the Keys page, revocable there', async () => {
    const user = await signUpUser(stack, { password: PASSWORD, displayName: 'Ada' });
    const team = await stack.api.post('/v1/workspaces', { headers: user.write(), body: { name: 'Agents team' } });
    expect(team.status).toBe(201);
    // A workspace where the user is only a viewer: someone else's, joined by invitation.
    const other = await signUpUser(stack, { password: PASSWORD });
    const shared = await stack.api.post('/v1/workspaces', { headers: other.write(), body: { name: 'Read-only team' } });
    const invitation = await stack.api.post(`/v1/workspaces/${shared.body.id}/invitations`, {
      headers: other.write(shared.body.id),
      body: { email: user.email, role: 'viewer' },
    });
    expect(invitation.status).toBe(201);
    expect((await stack.api.post('/v1/invitations/accept', { headers: user.write(), body: { token: invitation.body.token } })).status).toBe(
      200,
    );

    const { clientId, redirectUri } = await registerClient('Claude Desktop (test)');
    const state = `st-${randomBytes(6).toString('hex')}`;
    const { url, verifier } = authorization(clientId, redirectUri, state);
    const page = await newPage();
    await page.goto(url);
    await signInOnConsent(page, user, 'Claude Desktop (test)');
    // The query /oauth/authorize sent survived the sign-in.
    const landed = new URL(page.url());
    expect(landed.pathname).toBe('/console/oauth/consent');
    expect(landed.searchParams.get('client_id')).toBe(clientId);
    expect(landed.searchParams.get('state')).toBe(state);

    expect(await page.getByTestId('consent-client').textContent()).toBe('Claude Desktop (test)');
    const host = new URL(clientBase).host;
    expect(await page.getByTestId('consent-host').textContent()).toBe(`${host} (an app on this computer)`);

    // A viewer may grant only viewer; an owner any role, member by default.
    await page.getByLabel('Workspace').selectOption(shared.body.id);
    expect(await roleOptions(page)).toEqual(['viewer']);
    expect(await page.getByTestId('role-summary').textContent()).toContain('cannot start work');
    await page.getByLabel('Workspace').selectOption(team.body.id);
    expect(await roleOptions(page)).toEqual(['viewer', 'member', 'admin', 'owner']);
    expect(await page.getByLabel('Role').inputValue()).toBe('member');
    expect(await page.getByTestId('role-summary').textContent()).toContain('starts and cancels jobs');

    await page.waitForLoadState('networkidle');
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshots(page, 'oauth-consent');
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1280, height: 800 });

    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(`${redirectUri}?**`);
    const back = new URL(page.url());
    expect(back.origin + back.pathname).toBe(redirectUri);
    expect(back.searchParams.get('state')).toBe(state);
    const code = back.searchParams.get('code');
    expect(code).toBeTruthy();
    expect(callbacks.some((c) => c.startsWith('/callback?') && c.includes(`state=${state}`))).toBe(true);

    // The code buys a token that acts in the chosen workspace with the chosen role.
    const tokenRes = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: code!,
        redirect_uri: redirectUri,
        client_id: clientId,
        code_verifier: verifier,
      }),
    });
    const token = (await tokenRes.json()) as { access_token: string };
    expect(tokenRes.status).toBe(200);
    const bearer = { Authorization: `Bearer ${token.access_token}` };
    const account = await stack.api.get('/v1/account', { headers: bearer });
    expect(account.status).toBe(200);
    expect(account.body).toMatchObject({ organization_id: team.body.id, role: 'member' });

    // The Keys page of that workspace lists the grant as an OAuth app, and revokes it.
    await page.goto(`${base}/console/`);
    await heading(page, 'Overview');
    await page.getByLabel('Workspace').selectOption(team.body.id);
    await page.getByRole('link', { name: 'API keys' }).click();
    await heading(page, 'API keys');
    const row = page.getByTestId('keys-table').locator('tbody tr').filter({ hasText: 'OAuth app' });
    await row.waitFor();
    expect(await row.count()).toBe(1);
    expect(await row.textContent()).toContain('member');
    expect(await row.textContent()).toContain('Claude Desktop (test)');
    await page.waitForLoadState('networkidle');
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshots(page, 'keys-oauth-grant');
    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke its access' }).click();
    await row.getByText('revoked').waitFor();
    expect((await stack.api.get('/v1/account', { headers: bearer })).status).toBe(401);
  }, 90_000);

  it('signs up from the consent page and comes back to it; denies: "Access not granted" in the console, the browser never sent to the client, and no grant made', async () => {
    const { clientId, redirectUri } = await registerClient('Denied agent');
    const state = `st-${randomBytes(6).toString('hex')}`;
    const page = await newPage();
    await page.goto(authorization(clientId, redirectUri, state).url);
    await page.waitForURL(/\/console\/oauth\/consent\?/);
    const asked = new URL(page.url()).search;
    await heading(page, 'Sign in');
    await page.getByRole('link', { name: 'Create an account' }).click();
    await heading(page, 'Create an account');
    const email = `deny.${randomBytes(4).toString('hex')}@example.com`;
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await heading(page, 'Connect an application');
    expect(new URL(page.url()).pathname).toBe('/console/oauth/consent');
    expect(new URL(page.url()).search).toBe(asked);
    const user = await logInUser(stack, email, PASSWORD);

    await page.getByRole('button', { name: 'Deny' }).click();
    await heading(page, 'Access not granted');
    expect(await page.getByTestId('consent-denied').textContent()).toContain('Denied agent was not connected');
    expect(new URL(page.url()).pathname).toBe('/console/oauth/consent');
    expect(callbacks.some((c) => c.includes(`state=${state}`))).toBe(false);
    await page.waitForLoadState('networkidle');
    expect(await seriousA11yViolations(page)).toEqual([]);
    const keys = await stack.api.get('/v1/keys', { headers: user.read() });
    expect(keys.status).toBe(200);
    expect(keys.body.filter((k: { kind?: string; name: string | null }) => k.kind === 'oauth' || k.name === 'Denied agent')).toEqual([]);
    await page.getByRole('link', { name: 'Go to the console' }).click();
    await heading(page, 'Overview');
  });

  it('shows the API’s refusal in the page’s error style (an unknown client), and an incomplete request as such', async () => {
    const user = await signUpUser(stack, { password: PASSWORD });
    const page = await newPage();
    const query = new URLSearchParams({
      client_id: 'no-such-client',
      client_name: 'Nobody',
      redirect_uri: `${clientBase}/callback`,
      code_challenge: createHash('sha256').update('verifier').digest('base64url'),
      code_challenge_method: 'S256',
      state: 'x',
    });
    await page.goto(`${base}/console/oauth/consent?${query.toString()}`);
    await signInOnConsent(page, user, 'Nobody');
    await page.getByRole('button', { name: 'Allow' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/Request ID/);
    expect(new URL(page.url()).pathname).toBe('/console/oauth/consent');
    expect(callbacks.some((c) => c.includes('state=x'))).toBe(false);

    await page.goto(`${base}/console/oauth/consent?client_id=abc`);
    await heading(page, 'This link is incomplete');
    expect(await page.locator('main').textContent()).toContain('redirect_uri');
    expect(await seriousA11yViolations(page)).toEqual([]);
  });
});
