import { FIXTURES, startFakeUpstream } from '@sdx/fake-upstream';
import { createSandboxProvider, selectProviders } from '@sdx/providers';
import { eventually, startTestStack, type TestStack } from '@sdx/testing';

/**
 * Issue 47, item 6, end to end: Graph's answer about a node it cannot give (error 100, subcode 33:
 * deleted, never there, or not readable with this token) fails the job as target_not_found and
 * never counts toward the source's health; a refused token (190) is a credentials failure and
 * does count.
 */
let fake: Awaited<ReturnType<typeof startFakeUpstream>>;
let stack: TestStack;
const G = FIXTURES.graph;

beforeAll(async () => {
  fake = await startFakeUpstream();
  const selection = selectProviders(
    { PROVIDER_MODE: 'live', FACEBOOK_ACCESS_TOKEN: 'dummy-facebook-token', META_GRAPH_BASE_URL: `${fake.url}/${G.version}` },
    { sandbox: createSandboxProvider() },
  );
  stack = await startTestStack({ providers: selection.providers, withWorker: true });
});
afterAll(async () => {
  await stack.close();
  await fake.close();
});
beforeEach(() => fake.reset());

async function run(ws: { auth: Record<string, string> }, target: string) {
  const created = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { platform: 'facebook', operation: 'post', target } });
  expect(created.status).toBe(202);
  return eventually(async () => {
    const res = await stack.api.get(`/v1/jobs/${created.body.id}`, { headers: ws.auth });
    return ['completed', 'failed'].includes(res.body.status) ? res : undefined;
  }, 15_000);
}

const health = () =>
  stack.runtime.services.db.selectFrom('source_health').selectAll().where('provider', '=', 'facebook-pages').executeTakeFirst();

it('error 100/33 fails each job as target_not_found, uncharged, and never counts as a credentials failure', async () => {
  const ws = await stack.workspace({ credits: 1000 });
  fake.misbehave({ path: `/${G.version}/`, kind: 'permission', times: 3 });
  for (let i = 0; i < 3; i++) {
    const done = await run(ws, `https://www.facebook.com/${G.page.username}/posts/90000000${i}`);
    expect(done.body.status).toBe('failed');
    expect(done.body.error).toMatchObject({ code: 'target_not_found', retryable: false });
    expect(done.body.attempts).toBe(1);
    expect(done.body.attempt_sources).toEqual([
      expect.objectContaining({ provider: 'facebook-pages', outcome: 'failed', error_code: 'target_not_found' }),
    ]);
  }
  const row = await eventually(async () => ((await health())?.last_failure_at ? await health() : undefined));
  expect(row).toMatchObject({ auth_failures: 0, down_since: null });
  const usage = await stack.api.get('/v1/usage/current', { headers: ws.auth });
  expect(usage.body).toMatchObject({ credits_used: 0, credits_reserved: 0 });
  const platforms = await stack.api.get('/v1/platforms');
  const facebook = (platforms.body as Array<{ platform: string; sources?: Array<Record<string, unknown>> }>).find(
    (p) => p.platform === 'facebook',
  );
  expect(facebook?.sources?.find((s) => s.provider === 'facebook-pages')).toMatchObject({ status: 'up', auth_failures: 0 });
});

it("a refused token (190) is a credentials failure: upstream_auth, counted toward the source's health", async () => {
  const ws = await stack.workspace({ credits: 1000 });
  const before = (await health())?.auth_failures ?? 0;
  fake.misbehave({ path: `/${G.version}/`, kind: 'token_invalid', times: 1 });
  const done = await run(ws, `https://www.facebook.com/${G.page.username}/posts/900000005`);
  expect(done.body.status).toBe('failed');
  expect(done.body.error).toMatchObject({ code: 'upstream_auth' });
  const row = await eventually(async () => {
    const h = await health();
    return h && h.auth_failures === before + 1 ? h : undefined;
  });
  expect(row.auth_failures).toBe(before + 1);
});
