import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Request } from 'express';
import type request from 'supertest';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { loadConfig, signUpCredits, unverifiedSignUpWarning } from '@sdx/config';
import { startTestStack, type TestStack } from '@sdx/testing';
import { sessionToken } from '../src/middleware/session-cookie';
import { podSpecOf, render } from '../../../scripts/validate-k8s';

/**
 * What a production deployment relies on (extensions-2.md 2, issue 32 item 8): the session
 * cookie named with the `__Host-` prefix in production (Secure, Path=/, no Domain) and read by
 * that name only; and the Kubernetes manifests setting TRUST_PROXY for their ingress, so each
 * client is known by its own address rather than the ingress controller's.
 */

/** The environment the API container of the rendered manifests gets: its ConfigMaps, then its own env. */
function apiEnvironment(): Record<string, string> {
  const resources = render(path.resolve(__dirname, '../../../infra/k8s'));
  const api = resources.find((r) => r.kind === 'Deployment' && r.metadata.name === 'api');
  if (!api) throw new Error('no api Deployment in infra/k8s');
  const container = podSpecOf(api)!.containers!.find((c) => c.name === 'api') as {
    env?: Array<{ name: string; value?: string }>;
    envFrom?: Array<{ configMapRef?: { name: string } }>;
  };
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    const map = from.configMapRef && resources.find((r) => r.kind === 'ConfigMap' && r.metadata.name === from.configMapRef!.name);
    Object.assign(env, (map as { data?: Record<string, string> } | undefined)?.data ?? {});
  }
  for (const entry of container.env ?? []) if (entry.value !== undefined) env[entry.name] = entry.value;
  return env;
}

function setCookies(res: request.Response): string[] {
  const raw = res.headers['set-cookie'] as unknown;
  return Array.isArray(raw) ? (raw as string[]) : typeof raw === 'string' ? [raw] : [];
}

/** A request carrying only a Cookie header, as sessionToken reads it. */
const withCookie = (cookie: string) => ({ headers: { cookie } }) as unknown as Request;

async function signUp(stack: TestStack, headers: Record<string, string> = {}) {
  const email = `cookie.${randomBytes(4).toString('hex')}@example.com`;
  const res = await stack.api.post('/v1/auth/signup', { headers, body: { email, password: 'a long enough password', display_name: null } });
  expect(res.status).toBe(201);
  return res;
}

describe('Kubernetes manifests', () => {
  it('set TRUST_PROXY on the API for the one ingress hop, and the configuration reads it as a hop count', () => {
    const env = apiEnvironment();
    expect(env.TRUST_PROXY).toBe('1');
    expect(env.NODE_ENV).toBe('production');
    const config = loadConfig({
      ...env,
      SECRETS_KEY: randomBytes(32).toString('base64'),
      DATABASE_URL: 'postgres://x@127.0.0.1/x',
      REDIS_URL: 'redis://127.0.0.1:6379',
    });
    expect(config.trustProxy).toBe(1);
  });
});

describe('the shipped manifests and unverified emails (extensions-3.md 1)', () => {
  const base = {
    SECRETS_KEY: randomBytes(32).toString('base64'),
    DATABASE_URL: 'postgres://x@127.0.0.1/x',
    REDIS_URL: 'redis://127.0.0.1:6379',
  };

  it('Kubernetes: with the shipped Secret (no SMTP_URL) sign-up gives 0 credits whatever NEW_WORKSPACE_CREDITS says, and every process warns', () => {
    const secret = parse(readFileSync(path.resolve(__dirname, '../../../infra/k8s/secret.yaml'), 'utf8')) as {
      stringData: Record<string, string>;
    };
    const config = loadConfig({ ...apiEnvironment(), ...secret.stringData, ...base, NEW_WORKSPACE_CREDITS: '5000' });
    expect([config.nodeEnv, config.signupEnabled, config.emailVerification]).toEqual(['production', true, false]);
    expect(signUpCredits(config)).toBe(0);
    expect(unverifiedSignUpWarning(config)).toMatch(/SIGN-UP WITHOUT EMAIL VERIFICATION IN PRODUCTION/);
    // With a mail relay, sign-ups wait for their link, and the credits come with the verification.
    const withMail = loadConfig({
      ...apiEnvironment(),
      ...secret.stringData,
      ...base,
      SMTP_URL: 'smtps://u:p@mail.example.com:465',
      NEW_WORKSPACE_CREDITS: '5000',
    });
    expect([withMail.emailVerification, signUpCredits(withMail), unverifiedSignUpWarning(withMail)]).toEqual([true, 5000, undefined]);
    // Sign-up closed: nothing to warn about.
    expect(unverifiedSignUpWarning(loadConfig({ ...apiEnvironment(), ...base, SIGNUP_ENABLED: '0' }))).toBeUndefined();
  });

  it('docker-compose: mail goes to its Mailpit by default, so sign-ups wait for verification', () => {
    const compose = parse(readFileSync(path.resolve(__dirname, '../../../docker-compose.yml'), 'utf8')) as {
      'x-app-env': Record<string, string>;
    };
    // ${NAME:-default} as compose reads it with nothing set.
    const env = Object.fromEntries(
      Object.entries(compose['x-app-env']).map(([k, v]) => [k, String(v).replace(/^\$\{[A-Z0-9_]+:-(.*)\}$/, '$1')]),
    );
    const config = loadConfig({ ...env, ...base });
    expect([config.nodeEnv, config.emailVerification, signUpCredits(config) === config.newWorkspaceCredits]).toEqual([
      'production',
      true,
      true,
    ]);
    expect(unverifiedSignUpWarning(config)).toBeUndefined();
  });
});

describe('in production', () => {
  let stack: TestStack;
  const logged: string[] = [];
  beforeAll(async () => {
    const manifest = apiEnvironment();
    stack = await startTestStack({
      env: {
        NODE_ENV: 'production',
        TRUST_PROXY: manifest.TRUST_PROXY,
        SECRETS_KEY: randomBytes(32).toString('base64'),
        NEW_WORKSPACE_CREDITS: '5000',
        SIGNUP_LIMIT_PER_HOUR: '5',
        LOG_LEVEL: 'warn',
      },
      logDestination: { write: (line: string) => void logged.push(line) },
    });
  });

  it('gives a sign-up without email verification 0 credits, whatever NEW_WORKSPACE_CREDITS says, and warned at start', async () => {
    const res = await signUp(stack, { 'X-Forwarded-For': '198.51.100.77' });
    const usage = await stack.api.get('/v1/usage/current', { headers: { Cookie: setCookies(res)[0].split(';')[0] } });
    expect(usage.status).toBe(200);
    expect(usage.body).toMatchObject({ credit_limit: 0, credits_remaining: 0 });
    expect(logged.some((line) => line.includes('"level":40') && line.includes('SIGN-UP WITHOUT EMAIL VERIFICATION IN PRODUCTION'))).toBe(
      true,
    );
  });

  it('counts sign-ups of IPv6 clients by their /64', async () => {
    // SIGNUP_LIMIT_PER_HOUR is 5 (the default) here: five addresses of one /64 spend it, a sixth of the same /64 is refused, another /64 is not.
    for (let i = 1; i <= 5; i++) await signUp(stack, { 'X-Forwarded-For': `2001:db8:45:7::${i}` });
    const email = `v6.${randomBytes(4).toString('hex')}@example.com`;
    const refused = await stack.api.post('/v1/auth/signup', {
      headers: { 'X-Forwarded-For': '2001:db8:45:7:ffff:1:2:3' },
      body: { email, password: 'a long enough password', display_name: null },
    });
    expect([refused.status, refused.body.detail.error]).toEqual([429, 'rate_limit_exceeded']);
    await signUp(stack, { 'X-Forwarded-For': '2001:db8:45:8::1' });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('names the session cookie __Host-sdx_session: Secure, HttpOnly, Path=/, no Domain; the session works with it', async () => {
    const res = await signUp(stack);
    const cookies = setCookies(res);
    expect(cookies).toHaveLength(1);
    const [line] = cookies as [string];
    expect(line).toMatch(/^__Host-sdx_session=[^;]+;/);
    const attributes = line
      .split(';')
      .slice(1)
      .map((a) => a.trim().toLowerCase());
    expect(attributes).toEqual(expect.arrayContaining(['path=/', 'secure', 'httponly', 'samesite=lax']));
    expect(attributes.some((a) => a.startsWith('domain'))).toBe(false);

    const pair = line.split(';')[0];
    const session = await stack.api.get('/v1/auth/session', { headers: { Cookie: pair } });
    expect(session.status).toBe(200);
    expect(session.body.user.id).toBe(res.body.user.id);

    const out = await stack.api.post('/v1/auth/logout', { headers: { Cookie: pair, 'X-CSRF-Token': res.body.csrf_token } });
    expect(out.status).toBe(204);
    expect(setCookies(out).some((c) => c.startsWith('__Host-sdx_session=;') && /secure/i.test(c))).toBe(true);
  });

  it('reads only the prefixed name: a plain sdx_session cookie (which a sibling host could plant) is not a session', () => {
    expect(sessionToken(withCookie('__Host-sdx_session=tok_prefixed'), true)).toBe('tok_prefixed');
    expect(sessionToken(withCookie('sdx_session=tok_planted'), true)).toBeNull();
    expect(sessionToken(withCookie('sdx_session=tok_planted; __Host-sdx_session=tok_prefixed'), true)).toBe('tok_prefixed');
  });

  it('takes the client address from the ingress hop of X-Forwarded-For, and not what the client put before it', async () => {
    const res = await signUp(stack, { 'X-Forwarded-For': '203.0.113.50, 198.51.100.23' });
    const events = await stack.runtime.db
      .selectFrom('audit_events')
      .select(['action', 'ip'])
      .where('actor_id', '=', res.body.user.id)
      .execute();
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((e) => e.ip === '198.51.100.23')).toBe(true);
  });
});

describe('outside production', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(async () => {
    await stack.close();
  });

  it('names the cookie sdx_session, without Secure (local HTTP), and reads only that name', async () => {
    const res = await signUp(stack);
    const [line] = setCookies(res) as [string];
    expect(line).toMatch(/^sdx_session=[^;]+;/);
    expect(line.toLowerCase()).not.toContain('secure');
    const pair = line.split(';')[0];
    expect((await stack.api.get('/v1/auth/session', { headers: { Cookie: pair } })).status).toBe(200);
    const prefixed = `__Host-${pair}`;
    expect(sessionToken(withCookie(prefixed), false)).toBeNull();
    expect(sessionToken(withCookie(pair), false)).toBe(pair.slice('sdx_session='.length));
  });
});
