import { startFakeUpstream, type FakeUpstream } from '@sdx/fake-upstream';
import { createSandboxProvider, selectProviders } from '@sdx/providers';
import { eventually, startTestStack, type TestStack } from '@sdx/testing';

/**
 * Through the API and a worker: a search query reaches the provider as the user wrote it (X's
 * query language needs OR in capitals), the job shows it as submitted, and the key keeps the
 * case on X: "cats or dogs" is another query there, never served from the cache of "cats OR dogs".
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

it('sends "cats OR dogs" to X as written, and never serves "cats or dogs" from its cache', async () => {
  const ws = await stack.workspace({ credits: 1000 });
  const created = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'twitter', operation: 'search', target: '  cats OR dogs ', limit: 10 },
  });
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
  // On X the key keeps the case: the lower-case query (no operator there) is fresh work.
  const lower = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'twitter', operation: 'search', target: 'cats or dogs', limit: 10 },
  });
  expect(lower.status).toBe(202);
  expect(lower.body.cached).toBe(false);
  expect(lower.body.id).not.toBe(created.body.id);
  // The same query in the same case (white space aside) is still served from the cache.
  const same = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'twitter', operation: 'search', target: 'cats  OR dogs', limit: 10 },
  });
  expect(same.body.cached).toBe(true);
});
