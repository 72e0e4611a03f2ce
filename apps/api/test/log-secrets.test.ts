import request from 'supertest';
import { logInUser, signUpUser, startTestStack, type TestStack } from '@sdx/testing';

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
    secrets.push(user.password, user.cookie.split('=')[1]!, user.csrf);
    const again = await logInUser(stack, user.email, user.password);
    secrets.push(again.cookie.split('=')[1]!, again.csrf);
    const newPassword = `changed-${user.password}`;
    const changed = await stack.api.post('/v1/auth/password', { headers: again.write(), body: { current_password: user.password, new_password: newPassword } });
    expect(changed.status).toBeLessThan(300);
    secrets.push(newPassword);
    const wrong = await stack.api.post('/v1/auth/login', { body: { email: user.email, password: 'a-wrong-password-123' } });
    expect(wrong.status).toBe(401);
    secrets.push('a-wrong-password-123');

    const created = await stack.api.post('/v1/keys', { headers: user.write(user.personalWorkspaceId), body: { name: 'ci' } });
    const fresh = await logInUser(stack, user.email, newPassword);
    secrets.push(fresh.cookie.split('=')[1]!, fresh.csrf);
    const key = created.status === 201 ? (created.body.api_key as string) : null;
    const viaSession = await stack.api.post('/v1/keys', { headers: fresh.write(fresh.personalWorkspaceId), body: { name: 'ci-2' } });
    expect(viaSession.status).toBe(201);
    secrets.push(viaSession.body.api_key as string);
    if (key) secrets.push(key);

    // Every way a client may present a key, valid or not, and a job run through the worker.
    const k = viaSession.body.api_key as string;
    const bogus = `sdx_live_${'Z'.repeat(40)}`;
    secrets.push(bogus);
    for (const headers of [{ 'X-API-Key': k }, { Authorization: `Bearer ${k}` }, { 'Proxy-Authorization': `Bearer ${k}` }, { 'X-API-Key': bogus }]) {
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
