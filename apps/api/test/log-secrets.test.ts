import request from 'supertest';
import { logInUser, signUpUser, startSmtpCatcher, startTestStack, type TestStack } from '@sdx/testing';

/**
 * Nothing secret is logged. The whole stack (API and worker) logs at the most verbose level into
 * one buffer while a run creates and uses every kind of secret the service has: API keys
 * (created by the admin path and through the API, sent in each header a client might use and in
 * the query string), passwords (sign-up, sign-in, change), session tokens and CSRF tokens.
 * Afterwards no secret may appear anywhere in what was logged.
 */
const logged: string[] = [];
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({
    env: { LOG_LEVEL: 'trace' },
    logDestination: { write: (line: string) => void logged.push(line) },
    withWorker: true,
  });
});
afterAll(async () => {
  await stack.close();
});

describe('logs', () => {
  it('never contain a key, password, session token or CSRF token the run created', async () => {
    const secrets: string[] = [];
    const ws = await stack.workspace();
    secrets.push(ws.apiKey);

    const user = await signUpUser(stack);
    secrets.push(user.password, user.cookie.split('=')[1], user.csrf);
    const again = await logInUser(stack, user.email, user.password);
    secrets.push(again.cookie.split('=')[1], again.csrf);
    const newPassword = `changed-${user.password}`;
    const changed = await stack.api.post('/v1/auth/password', {
      headers: again.write(),
      body: { current_password: user.password, new_password: newPassword },
    });
    expect(changed.status).toBeLessThan(300);
    secrets.push(newPassword);
    const wrong = await stack.api.post('/v1/auth/login', { body: { email: user.email, password: 'a-wrong-password-123' } });
    expect(wrong.status).toBe(401);
    secrets.push('a-wrong-password-123');

    const created = await stack.api.post('/v1/keys', { headers: user.write(user.personalWorkspaceId), body: { name: 'ci' } });
    const fresh = await logInUser(stack, user.email, newPassword);
    secrets.push(fresh.cookie.split('=')[1], fresh.csrf);
    const key = created.status === 201 ? (created.body.api_key as string) : null;
    const viaSession = await stack.api.post('/v1/keys', { headers: fresh.write(fresh.personalWorkspaceId), body: { name: 'ci-2' } });
    expect(viaSession.status).toBe(201);
    secrets.push(viaSession.body.api_key as string);
    if (key) secrets.push(key);

    // Every way a client may present a key, valid or not, and a job run through the worker.
    const k = viaSession.body.api_key as string;
    const bogus = `sdx_live_${'Z'.repeat(40)}`;
    secrets.push(bogus);
    for (const headers of [
      { 'X-API-Key': k },
      { Authorization: `Bearer ${k}` },
      { 'Proxy-Authorization': `Bearer ${k}` },
      { 'X-API-Key': bogus },
    ]) {
      await request(stack.app).get('/v1/account').set(headers);
    }
    await request(stack.app).get(`/v1/account?api_key=${k}`);
    const job = await request(stack.app).post('/v1/jobs').set('X-API-Key', k).send({ operation: 'posts', target: 'secrets_job' });
    expect(job.status).toBe(202);
    for (let i = 0; i < 100; i++) {
      const state = await request(stack.app).get(`/v1/jobs/${job.body.id}`).set('X-API-Key', k);
      if (state.body.status === 'completed') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await stack.api.post('/v1/auth/logout', { headers: fresh.write() });

    const text = logged.join('');
    // The run was logged: an access line per request, with its headers, and the worker's lines about the job.
    expect(logged.filter((line) => line.includes('"headers"')).length).toBeGreaterThanOrEqual(12);
    expect(text).toContain(job.body.id);
    const leaked = secrets.filter((secret) => secret.length >= 8 && text.includes(secret));
    expect(leaked).toEqual([]);
  });
});

describe('logs of the mailed links (extensions-3.md 1)', () => {
  it('never contain a verification, reset or invitation token, in the URL, the Referer or any header that names a page', async () => {
    const lines: string[] = [];
    const smtp = await startSmtpCatcher();
    const APP_URL = 'http://console.test';
    const mailed = await startTestStack({
      env: { LOG_LEVEL: 'trace', SMTP_URL: smtp.url, APP_URL, EMAIL_VERIFICATION: '1' },
      logDestination: { write: (line: string) => void lines.push(line) },
    });
    try {
      const tokenIn = async (to: string, kind: string) => {
        const pattern = new RegExp(`/console/${kind}\\?token=([A-Za-z0-9_%-]+)`);
        await smtp.waitFor((m) => m.to === to && pattern.test(m.text), 10_000);
        return decodeURIComponent(pattern.exec(smtp.messages.filter((m) => m.to === to && pattern.test(m.text)).at(-1)!.text)![1]);
      };
      const email = `links.${Date.now().toString(36)}@example.com`;
      const password = 'a password for the links';
      expect((await mailed.api.post('/v1/auth/signup', { body: { email, password } })).status).toBe(202);
      const verification = await tokenIn(email, 'verify');
      // What a browser does with each link: the page, then its requests naming the page as Referer (and proxies' headers that name it).
      const page = (kind: string, token: string) => `${APP_URL}/console/${kind}?token=${encodeURIComponent(token)}`;
      const follow = async (kind: string, token: string) => {
        await request(mailed.app).get(`/console/${kind}?token=${encodeURIComponent(token)}`);
        await request(mailed.app)
          .get('/v1/auth/session')
          .set('Referer', page(kind, token))
          .set('X-Original-URL', `/console/${kind}?token=${token}`);
        await request(mailed.app)
          .get(`/console/signup?next=${encodeURIComponent(`/${kind}?token=${token}`)}`)
          .set('Referer', page(kind, token));
      };
      await follow('verify', verification);
      const verified = await request(mailed.app)
        .post('/v1/auth/verify')
        .set('Referer', page('verify', verification))
        .send({ token: verification, password });
      expect(verified.status).toBe(200);
      const cookie = (verified.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
      const csrf = verified.body.csrf_token as string;

      expect((await mailed.api.post('/v1/auth/password-reset', { body: { email } })).status).toBe(202);
      const reset = await tokenIn(email, 'reset');
      await follow('reset', reset);
      expect(
        (
          await request(mailed.app)
            .post('/v1/auth/password-reset/confirm')
            .set('Referer', page('reset', reset))
            .send({ token: reset, new_password: 'a newer password for the links' })
        ).status,
      ).toBe(204);

      const signedIn = await request(mailed.app).post('/v1/auth/login').send({ email, password: 'a newer password for the links' });
      expect(signedIn.status).toBe(200);
      const session = {
        Cookie: (signedIn.headers['set-cookie'] as unknown as string[])[0].split(';')[0],
        'X-CSRF-Token': signedIn.body.csrf_token as string,
      };
      const team = await request(mailed.app).post('/v1/workspaces').set(session).send({ name: 'Links' });
      const invited = await request(mailed.app)
        .post(`/v1/workspaces/${team.body.id}/invitations`)
        .set(session)
        .send({ email: `invitee.${Date.now().toString(36)}@example.com`, role: 'member' });
      expect(invited.status).toBe(201);
      const invitation = invited.body.token as string;
      await request(mailed.app).get(`/console/invitations/accept?token=${encodeURIComponent(invitation)}`);
      const preview = await request(mailed.app)
        .get(`/v1/invitations/preview?token=${encodeURIComponent(invitation)}`)
        .set('Referer', page('invitations/accept', invitation));
      expect(preview.status).toBe(200);
      expect(cookie && csrf).toBeTruthy();

      const text = lines.join('');
      expect(lines.filter((line) => line.includes('"referer"')).length).toBeGreaterThanOrEqual(7);
      const leaked = [verification, encodeURIComponent(verification), reset, invitation].filter((token) => text.includes(token));
      expect(leaked).toEqual([]);
    } finally {
      await mailed.close();
      await smtp.close();
    }
  }, 60_000);
});
