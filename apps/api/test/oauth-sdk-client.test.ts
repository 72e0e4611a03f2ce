import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { createApiServer } from '@sdx/app-api';
import { signUpUser, startTestStack, type SessionUser, type TestStack } from '@sdx/testing';

/**
 * A remote agent signs in by OAuth with the MCP SDK's own client (its discovery, dynamic
 * registration, PKCE and token handling), the person consenting through the console's API, then
 * calls the tools over Streamable HTTP; when its access token expires, the SDK refreshes it and
 * the call goes through. APP_URL is the served origin, as in production.
 */
let stack: TestStack;
let server: http.Server;
let url: string;
let owner: SessionUser;
let teamId: string;
const REDIRECT = 'http://127.0.0.1:8765/callback';

/** An agent's OAuth state, in memory: what a desktop or web agent keeps. */
class AgentAuth implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | null = null;
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'SDK agent',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(authorizationUrl: URL) {
    this.authorizationUrl = authorizationUrl;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** What the person's browser does: opens the authorization URL, lands on the consent page, and the console allows with the workspace and role chosen. */
async function consentInBrowser(authorizationUrl: URL, role: string): Promise<string> {
  const opened = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(opened.status).toBe(302);
  const consentPage = new URL(opened.headers.get('location')!, url);
  expect(consentPage.pathname).toBe('/console/oauth/consent');
  const query = Object.fromEntries(consentPage.searchParams);
  expect(query).toMatchObject({ client_name: 'SDK agent', code_challenge_method: 'S256', redirect_uri: REDIRECT });
  const allowed = await stack.api.post('/v1/oauth/consent', {
    headers: owner.write(),
    body: {
      client_id: query.client_id,
      redirect_uri: query.redirect_uri,
      code_challenge: query.code_challenge,
      code_challenge_method: query.code_challenge_method,
      ...(query.state ? { state: query.state } : {}),
      ...(query.scope ? { scope: query.scope } : {}),
      workspace_id: teamId,
      role,
    },
  });
  expect(allowed.status).toBe(200);
  const back = new URL(allowed.body.redirect_to);
  if (query.state) expect(back.searchParams.get('state')).toBe(query.state);
  return back.searchParams.get('code')!;
}

beforeAll(async () => {
  // The port first, so APP_URL (the issuer, the resource) is the origin the agent reaches.
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  url = `http://127.0.0.1:${port}`;
  stack = await startTestStack({ env: { APP_URL: url } });
  server = createApiServer(stack.app);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  owner = await signUpUser(stack);
  teamId = (await stack.api.post('/v1/workspaces', { headers: owner.write(), body: { name: 'SDK agents' } })).body.id as string;
}, 60_000);
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await stack.close();
});

it('signs an agent in with the SDK client, calls tools as the chosen role, and refreshes an expired token', async () => {
  const agent = new AgentAuth();
  const first = new Client({ name: 'oauth-agent', version: '1.0.0' });
  // No token yet: the 401 sends the SDK through discovery and registration to the authorization URL.
  await expect(first.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { authProvider: agent }))).rejects.toBeInstanceOf(
    UnauthorizedError,
  );
  expect(agent.info?.client_id).toMatch(/^oac_/);
  expect(agent.authorizationUrl?.href.startsWith(`${url}/oauth/authorize?`)).toBe(true);
  expect(agent.authorizationUrl?.searchParams.get('code_challenge_method')).toBe('S256');

  const code = await consentInBrowser(agent.authorizationUrl!, 'viewer');
  const finishing = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { authProvider: agent });
  await finishing.finishAuth(code);
  expect(agent.saved).toMatchObject({
    token_type: 'Bearer',
    expires_in: 3600,
    access_token: expect.stringMatching(/^sdx_oat_/),
    refresh_token: expect.stringMatching(/^sdx_ort_/),
  });

  const client = new Client({ name: 'oauth-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { authProvider: agent }));
  try {
    const usage = await client.callTool({ name: 'get_usage', arguments: {} });
    expect(usage.isError).toBeFalsy();
    // A viewer's token may only read: starting a job is refused as the REST route refuses it.
    const start = await client.callTool({
      name: 'start_job',
      arguments: { platform: 'instagram', operation: 'profile', target: 'natgeo' },
    });
    expect(start.isError).toBe(true);
    expect(start.structuredContent).toMatchObject({ error: 'forbidden' });

    // The hour is up: the next call is refused, the SDK refreshes with its refresh token, and retries.
    const before = agent.saved!;
    await sql`update oauth_tokens set expires_at = now() - interval '1 second' where kind = 'access'`.execute(stack.runtime.db);
    const again = await client.callTool({ name: 'get_usage', arguments: {} });
    expect(again.isError).toBeFalsy();
    expect(agent.saved!.access_token).not.toBe(before.access_token);
    expect(agent.saved!.refresh_token).not.toBe(before.refresh_token);
  } finally {
    await client.close();
  }

  const keys = await stack.api.get('/v1/keys', { headers: owner.read(teamId) });
  expect(keys.body.filter((k: { kind: string }) => k.kind === 'oauth')).toEqual([
    expect.objectContaining({ name: 'SDK agent', role: 'viewer', created_by: owner.userId, revoked_at: null }),
  ]);
});
