import request from 'supertest';
import { addQueueCountsSource, bullQueueCounts } from '@sdx/metrics';
import { QUEUES } from '@sdx/queue';
import { startTestStack, type TestStack } from '@sdx/testing';

/**
 * GET /metrics on the API: the HTTP series by route template, the queue gauge read from Redis at
 * scrape time, and every series name of docs/deployment.md "Metrics" declared.
 */

let stack: TestStack;
let removeSource: () => void;
beforeAll(async () => {
  stack = await startTestStack();
  removeSource = addQueueCountsSource(bullQueueCounts([stack.runtime.queues.jobs, stack.runtime.queues.batchChildren]));
});
afterAll(async () => {
  removeSource();
  await stack.close();
});

/** The value of one sample line, `name{labels} value`, or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const rendered = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const labelText = line.slice(name.length + 1, line.lastIndexOf('}'));
    const parts = labelText.split(',');
    if (rendered.every((l) => parts.includes(l)) && parts.length === rendered.length) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

async function scrape(): Promise<string> {
  const res = await stack.api.get('/metrics');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  expect(res.headers['x-request-id']).toBeDefined();
  return res.text;
}

describe('GET /metrics', () => {
  it('declares every series of the service', async () => {
    const text = await scrape();
    for (const name of [
      'sdx_http_requests_total',
      'sdx_http_request_duration_seconds',
      'sdx_jobs_admitted_total',
      'sdx_jobs_finished_total',
      'sdx_job_queue_wait_seconds',
      'sdx_job_run_seconds',
      'sdx_queue_jobs',
      'sdx_credits_settled_total',
      'sdx_scheduler_dispatch_lag_seconds',
      'sdx_webhook_deliveries_total',
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
  });

  it('counts requests by route template and status, never by raw path', async () => {
    const ws = await stack.workspace({ credits: 1000 });
    const before = await scrape();
    const jobRoute = { method: 'GET', route: '/v1/jobs/:job_id', status: '404' };
    const countBefore = sample(before, 'sdx_http_requests_total', jobRoute) ?? 0;

    const missing = 'job_01JMETRICSMISSINGJOB00000';
    expect((await stack.api.get(`/v1/jobs/${missing}`, { headers: ws.auth })).status).toBe(404);
    expect((await stack.api.get(`/v1/jobs/${missing}`, { headers: ws.auth })).status).toBe(404);
    expect((await stack.api.get('/v1/account')).status).toBe(401);
    expect((await stack.api.get('/v1/account', { headers: ws.auth })).status).toBe(200);
    expect((await request(stack.app).get('/no/such/path/42')).status).toBe(404);

    const after = await scrape();
    expect(sample(after, 'sdx_http_requests_total', jobRoute)).toBe(countBefore + 2);
    expect(sample(after, 'sdx_http_requests_total', { method: 'GET', route: '/v1/account', status: '401' })).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'sdx_http_requests_total', { method: 'GET', route: '/v1/account', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'sdx_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'sdx_http_request_duration_seconds_count', { method: 'GET', route: '/v1/jobs/:job_id' })).toBeGreaterThanOrEqual(
      2,
    );
    expect(
      sample(after, 'sdx_http_request_duration_seconds_bucket', { method: 'GET', route: '/v1/jobs/:job_id', le: '+Inf' }),
    ).toBeGreaterThanOrEqual(2);
    expect(after).not.toContain(missing);
    expect(after).not.toContain('/no/such/path');
  });

  it('reports queue entries by state at scrape time', async () => {
    const ws = await stack.workspace({ credits: 10_000 });
    // Entries wait as `waiting`, or as `prioritized` when the fair order gives them a priority.
    const waitingIn = (text: string, queue: string) =>
      (sample(text, 'sdx_queue_jobs', { queue, state: 'waiting' }) ?? 0) +
      (sample(text, 'sdx_queue_jobs', { queue, state: 'prioritized' }) ?? 0);
    const waitingBefore = waitingIn(await scrape(), QUEUES.jobs);
    for (const target of ['natgeo', 'nasa', 'bbc']) {
      const res = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target } });
      expect(res.status).toBe(202);
    }
    await stack.runtime.queues.idle();
    const text = await scrape();
    // No worker runs in this file: the three entries wait.
    expect(waitingIn(text, QUEUES.jobs)).toBe(waitingBefore + 3);
    expect(waitingIn(text, QUEUES.batchChildren)).toBe(0);
    expect(sample(text, 'sdx_queue_jobs', { queue: QUEUES.jobs, state: 'active' })).toBe(0);
  });
});
