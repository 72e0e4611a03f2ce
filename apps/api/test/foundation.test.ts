import { CATALOG, PLATFORMS } from '@sdx/catalog';
import request from 'supertest';
import { startTestStack, type TestStack } from '@sdx/testing';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

describe('GET /v1/platforms', () => {
  it('lists the 55 operations of the catalog without credentials', async () => {
    const res = await stack.api.get('/v1/platforms');
    expect(res.status).toBe(200);
    expect(res.body.map((p: { platform: string }) => p.platform)).toEqual(['instagram', 'tiktok', 'youtube', 'twitter', 'facebook']);
    expect(res.body.reduce((n: number, p: { operations: unknown[] }) => n + p.operations.length, 0)).toBe(55);
  });
});

describe('authentication', () => {
  it('answers 401 missing_authentication without a key', async () => {
    const res = await stack.api.get('/v1/account');
    expect(res.status).toBe(401);
    expect(res.body.detail.error).toBe('missing_authentication');
    expect(res.headers['x-request-id']).toBeTruthy();
  });
  it('accepts X-API-Key and Bearer', async () => {
    const ws = await stack.workspace({ credits: 500 });
    const a = await stack.api.get('/v1/account', { headers: { 'X-API-Key': ws.apiKey } });
    expect(a.status).toBe(200);
    expect(a.body.organization_id).toBe(ws.workspaceId);
    const b = await stack.api.get('/v1/usage/current', { headers: { Authorization: `Bearer ${ws.apiKey}` } });
    expect(b.status).toBe(200);
    expect(b.body.credit_limit).toBe(500);
    expect(b.body.credits_remaining).toBe(500);
  });
});

describe('validation', () => {
  it('renders HTTPValidationError for an unknown key and a bad limit', async () => {
    const ws = await stack.workspace();
    const res = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target: 'abc', limit: 0, bogus: 1 } });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ loc: ['body', 'bogus'], type: 'extra_forbidden' }),
        expect.objectContaining({ loc: ['body', 'limit'], type: 'greater_than_equal' }),
      ]),
    );
  });
  it('answers JSON 404 on unknown paths', async () => {
    // Undocumented on purpose, so not checked against openapi.yaml.
    const res = await request(stack.app).get('/v1/nope');
    expect(res.status).toBe(404);
    expect(res.body.detail.error).toBe('not_found');
  });
});

it('catalog sanity', () => {
  expect(PLATFORMS.map((p) => CATALOG[p].length)).toEqual([14, 11, 10, 7, 13]);
});
