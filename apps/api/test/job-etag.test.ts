import { EventEmitter } from 'node:events';
import { createApp, HeavyReads, RedisRateLimiter } from '@sdx/app-api';
import { ContractClient, eventually, startTestStack, type SeededWorkspace, type TestStack } from '@sdx/testing';

/**
 * Conditional GET of a job: every answer carries a weak ETag; If-None-Match naming it answers
 * 304 with no body while the job is unchanged, before any result is read or a heavy-read place
 * is taken; any change to the job (its progress, its completion) changes the tag.
 */

let stack: TestStack;
let ws: SeededWorkspace;

beforeAll(async () => {
  stack = await startTestStack({ withWorker: true });
  ws = await stack.workspace({ credits: 10_000 });
}, 60_000);
afterAll(async () => {
  await stack.close();
});

async function completedJob(body: Record<string, unknown>): Promise<string> {
  const created = await stack.api.post('/v1/jobs', { headers: ws.auth, body });
  expect(created.status).toBe(202);
  await eventually(
    async () =>
      (await stack.runtime.db.selectFrom('jobs').select('status').where('id', '=', created.body.id).executeTakeFirstOrThrow()).status ===
      'completed',
    30_000,
  );
  return created.body.id as string;
}

it('answers 304 with no body for the ETag of an unchanged job, in any of its forms', async () => {
  const id = await completedJob({ platform: 'twitter', operation: 'profile', target: 'etagprofile' });
  const first = await stack.api.get(`/v1/jobs/${id}`, { headers: ws.auth });
  expect(first.status).toBe(200);
  const etag = String(first.headers.etag);
  expect(etag).toMatch(/^W\/"[A-Za-z0-9_-]{22}"$/);
  // The same job, the same tag.
  expect((await stack.api.get(`/v1/jobs/${id}`, { headers: ws.auth })).headers.etag).toBe(etag);

  for (const ifNoneMatch of [etag, etag.slice(2), `W/"other", ${etag}`, '*']) {
    const again = await stack.api.get(`/v1/jobs/${id}`, { headers: { ...ws.auth, 'If-None-Match': ifNoneMatch } });
    expect(again.status).toBe(304);
    expect(again.text ?? '').toBe('');
    expect(again.headers.etag).toBe(etag);
    expect(again.headers['x-request-id']).toBeTruthy();
  }
  // Another tag: the whole job.
  const other = await stack.api.get(`/v1/jobs/${id}`, { headers: { ...ws.auth, 'If-None-Match': 'W/"not-this-one"' } });
  expect(other.status).toBe(200);
  expect(other.body).toMatchObject({ id, status: 'completed' });
  // Another workspace still gets 404, tag or not.
  const stranger = await stack.workspace({ credits: 10 });
  expect((await stack.api.get(`/v1/jobs/${id}`, { headers: { ...stranger.auth, 'If-None-Match': etag } })).status).toBe(404);
});

it('changes the tag as the job changes: running, then completed', async () => {
  const created = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'instagram', operation: 'posts', target: 'etag_sandbox_slow_1500', limit: 40 },
  });
  const early = await stack.api.get(`/v1/jobs/${created.body.id}`, { headers: ws.auth });
  const earlyTag = String(early.headers.etag);
  await eventually(
    async () =>
      (await stack.runtime.db.selectFrom('jobs').select('status').where('id', '=', created.body.id).executeTakeFirstOrThrow()).status ===
      'completed',
    30_000,
  );
  const done = await stack.api.get(`/v1/jobs/${created.body.id}`, { headers: { ...ws.auth, 'If-None-Match': earlyTag } });
  expect(done.status).toBe(200);
  expect(done.body).toMatchObject({ status: 'completed', result_count: 40 });
  expect(done.headers.etag).not.toBe(earlyTag);
});

it('answers a conditional poll of a large result with 304 even when the heavy-read bound is full', async () => {
  const id = await completedJob({ platform: 'twitter', operation: 'followers', target: 'etagbig', limit: 3_000 });
  const heavyReads = new HeavyReads(1, 1_000);
  const api = new ContractClient(
    createApp({
      services: stack.runtime.services,
      registry: stack.runtime.registry,
      limiter: new RedisRateLimiter(stack.runtime.redis, stack.config.redisPrefix),
      redis: stack.runtime.redis,
      heavyReads,
    }),
  );
  const first = await api.get(`/v1/jobs/${id}`, { headers: ws.auth });
  expect(first.status).toBe(200);
  expect(first.body.result).toHaveLength(3_000);
  // The workspace's one heavy-read place taken.
  const inProgress = new EventEmitter();
  heavyReads.admit(inProgress, ws.workspaceId, 3_000, stack.runtime.db);
  expect((await api.get(`/v1/jobs/${id}`, { headers: ws.auth })).status).toBe(429);
  const conditional = await api.get(`/v1/jobs/${id}`, { headers: { ...ws.auth, 'If-None-Match': String(first.headers.etag) } });
  expect(conditional.status).toBe(304);
  expect(heavyReads.running(ws.workspaceId)).toBe(1);
  inProgress.emit('close');
});

it('polls a completed job with include_result=false: result null, nothing read, a tag of its own that still answers 304', async () => {
  const id = await completedJob({ platform: 'twitter', operation: 'followers', target: 'etagnoresult', limit: 1_500 });
  const whole = await stack.api.get(`/v1/jobs/${id}`, { headers: ws.auth });
  expect(whole.body.result).toHaveLength(1_500);
  const light = await stack.api.get(`/v1/jobs/${id}?include_result=false`, { headers: ws.auth });
  expect(light.status).toBe(200);
  expect(light.body).toMatchObject({ id, status: 'completed', result_count: 1_500, result: null });
  expect(light.text.length).toBeLessThan(4_000);
  // Another representation, another tag: a cache never answers the whole job with the light one.
  expect(light.headers.etag).not.toBe(whole.headers.etag);
  const again = await stack.api.get(`/v1/jobs/${id}?include_result=false`, {
    headers: { ...ws.auth, 'If-None-Match': String(light.headers.etag) },
  });
  expect(again.status).toBe(304);
  const wholeWithLightTag = await stack.api.get(`/v1/jobs/${id}`, { headers: { ...ws.auth, 'If-None-Match': String(light.headers.etag) } });
  expect(wholeWithLightTag.status).toBe(200);
  expect(wholeWithLightTag.body.result).toHaveLength(1_500);
  // Another workspace: 404 either way.
  const stranger = await stack.workspace({ credits: 10 });
  expect((await stack.api.get(`/v1/jobs/${id}?include_result=false`, { headers: stranger.auth })).status).toBe(404);
});
