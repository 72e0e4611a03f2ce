import request from 'supertest';
import { startTestStack, type TestStack } from '@sdx/testing';

/** Bull Board at /admin/queues: absent without ADMIN_TOKEN, behind it when set. */

const TOKEN = 'admin-token-for-the-queue-board-0123456789';

describe('without ADMIN_TOKEN', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(async () => {
    await stack.close();
  });

  it('serves nothing at /admin/queues, whatever the credentials', async () => {
    for (const auth of [undefined, `Bearer ${TOKEN}`]) {
      const req = request(stack.app).get('/admin/queues');
      const res = await (auth ? req.set('Authorization', auth) : req);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      expect(res.body.detail.error).toBe('not_found');
    }
  });
});

describe('with ADMIN_TOKEN', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startTestStack({ env: { ADMIN_TOKEN: TOKEN } });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('answers a JSON 401 asking for Basic credentials without the token', async () => {
    const res = await request(stack.app).get('/admin/queues');
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.headers['www-authenticate']).toMatch(/^Basic realm=/);
    expect(res.body.detail.error).toBe('missing_authentication');
    expect(res.text).not.toContain(TOKEN);
  });

  it('refuses a wrong token, an API key, and the token under another scheme', async () => {
    const ws = await stack.workspace();
    for (const header of [
      'Bearer not-the-admin-token-0000000000000000',
      `Bearer ${TOKEN}x`,
      `Basic ${Buffer.from('admin:wrong').toString('base64')}`,
      `Token ${TOKEN}`,
    ]) {
      const res = await request(stack.app).get('/admin/queues').set('Authorization', header);
      expect({ header, status: res.status }).toEqual({ header, status: 401 });
    }
    const withKey = await request(stack.app).get('/admin/queues').set('X-API-Key', ws.apiKey);
    expect(withKey.status).toBe(401);
    // The board's own API is behind the same token.
    const api = await request(stack.app).get('/admin/queues/api/queues');
    expect(api.status).toBe(401);
  });

  it('serves the board for the token as a bearer token or as the Basic password', async () => {
    const bearer = await request(stack.app).get('/admin/queues').set('Authorization', `Bearer ${TOKEN}`);
    expect(bearer.status).toBe(200);
    expect(bearer.headers['content-type']).toMatch(/text\/html/);
    const basic = await request(stack.app)
      .get('/admin/queues')
      .set('Authorization', `Basic ${Buffer.from(`ops:${TOKEN}`).toString('base64')}`);
    expect(basic.status).toBe(200);
  });

  it('lists the extraction queues, read-only, with their waiting entries', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    expect((await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target: 'natgeo' } })).status).toBe(202);
    await stack.runtime.queues.idle();
    const res = await request(stack.app).get('/admin/queues/api/queues').set('Authorization', `Bearer ${TOKEN}`);
    expect(res.status).toBe(200);
    const queues = res.body.queues as Array<{ name: string; readOnlyMode: boolean; counts: Record<string, number> }>;
    expect(queues.map((q) => q.name).sort()).toEqual(['extract-batch-children', 'extract-jobs']);
    expect(queues.every((q) => q.readOnlyMode)).toBe(true);
    // Entries wait as `waiting`, or as `prioritized` when the fair order gives them a priority.
    const jobs = queues.find((q) => q.name === 'extract-jobs')!.counts;
    expect((jobs.waiting ?? 0) + (jobs.prioritized ?? 0)).toBeGreaterThanOrEqual(1);
  });
});
