import { startFakeUpstream, type FakeUpstream } from '@sdx/fake-upstream';
import { createSandboxProvider, selectProviders } from '@sdx/providers';
import { eventually, startTestStack, type TestStack } from '@sdx/testing';

/**
 * Through the API and a worker: a search query reaches the provider as the user wrote it (X's
 * query language needs OR in capitals), the job shows it as submitted, and the lower-cased form
 * stays the dedup key.
 */
let fake: FakeUpstream;
let stack: TestStack;

beforeAll(async () => {
  fake = await startFakeUpstream();
  const selection = selectProviders(
    { PROVIDER_MODE: 'live', X_BEARER_TOKEN: 'dummy-x-token', X_BASE_URL: fake.url },
    { sandbox: createSandboxProvider() },
  );
  stack = await startTestStack({ providers: selection.providers, withWorker: true });
});
afterAll(async () => {
  await stack.close();
  await fake.close();
});

it('sends "cats OR dogs" to X as written, and dedups it with "cats or dogs"', async () => {
  const ws = await stack.workspace({ credits: 1000 });
  const created = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { platform: 'twitter', operation: 'search', target: '  cats OR dogs ', limit: 10 } });
  expect(created.status).toBe(202);
  expect(created.body.target).toBe('cats OR dogs');
  const done = await eventually(async () => {
    const res = await stack.api.get(`/v1/jobs/${created.body.id}`, { headers: ws.auth });
    return ['completed', 'failed'].includes(res.body.status) ? res : undefined;
  });
  expect(done.body.status).toBe('completed');
  const queries = fake.requests.filter((r) => r.path === '/2/tweets/search/recent').map((r) => r.query.query ?? '');
  expect(queries.length).toBeGreaterThan(0);
  for (const q of queries) expect(q).toContain('cats OR dogs');
  // The key form is lower-cased: the same query in other case is served from the cache.
  const again = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { platform: 'twitter', operation: 'search', target: 'Cats or Dogs', limit: 10 } });
  expect(again.body.cached).toBe(true);
});
