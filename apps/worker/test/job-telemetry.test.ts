import { Writable } from 'node:stream';
import pino from 'pino';
import request from 'supertest';
import { registry } from '@sdx/metrics';
import { startTestStack, type TestStack, waitForJob } from '@sdx/testing';
import { startWorker } from '@sdx/app-worker';

/**
 * What a job tells operators: the request ID that admitted it is stored with it and carried by
 * every log line the worker writes about it, and the job series of /metrics move.
 */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

async function series(name: string, labels: Record<string, string>): Promise<number> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const value = (metric?.values ?? []).find(
    (v) => Object.entries(labels).every(([k, want]) => String((v.labels as Record<string, unknown>)[k]) === want) && !('le' in v.labels),
  );
  return Number(value?.value ?? 0);
}

describe('job telemetry', () => {
  it('stores the request ID with the job and logs it on every worker line about the job', async () => {
    const ws = await stack.workspace();
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const log = pino({ level: 'debug' }, sink);
    const services = { ...stack.runtime.services, log };
    const worker = startWorker({ services, providers: stack.runtime.registry, redisUrl: stack.config.redisUrl, concurrency: 2 });
    try {
      // One failed attempt first, so the job is logged more than once.
      const res = await request(stack.app)
        .post('/v1/jobs')
        .set(ws.auth)
        .set('X-Request-ID', 'req-telemetry-1')
        .send({ operation: 'posts', target: 'sandbox_flaky_1_telemetry' });
      expect(res.status).toBe(202);
      const row = await stack.runtime.db.selectFrom('jobs').select('request_id').where('id', '=', res.body.id).executeTakeFirstOrThrow();
      expect(row.request_id).toBe('req-telemetry-1');
      await waitForJob(stack, ws.auth, res.body.id, (j) => j.status === 'completed');
      const about = lines.filter((l) => l.jobId === res.body.id);
      expect(about.length).toBeGreaterThanOrEqual(2);
      for (const line of about) expect(line.requestId).toBe('req-telemetry-1');
    } finally {
      await worker.close();
    }
  });

  it('counts admitted and finished jobs, settled credits, queue waits and run times', async () => {
    const ws = await stack.workspace();
    const labels = { platform: 'twitter', operation: 'followers' };
    const before = {
      admitted: await series('sdx_jobs_admitted_total', labels),
      completed: await series('sdx_jobs_finished_total', { ...labels, status: 'completed' }),
      failed: await series('sdx_jobs_finished_total', { ...labels, status: 'failed' }),
      settled: await series('sdx_credits_settled_total', {}),
    };
    stack.startWorker(2);
    const ok = await stack.api.post('/v1/jobs', {
      headers: ws.auth,
      body: { platform: 'twitter', operation: 'followers', target: 'sandbox_count_10_metrics', limit: 50 },
    });
    const bad = await stack.api.post('/v1/jobs', {
      headers: ws.auth,
      body: { platform: 'twitter', operation: 'followers', target: 'sandbox_not_found' },
    });
    await waitForJob(stack, ws.auth, ok.body.id, (j) => j.status === 'completed');
    await waitForJob(stack, ws.auth, bad.body.id, (j) => j.status === 'failed');
    expect(await series('sdx_jobs_admitted_total', labels)).toBe(before.admitted + 2);
    expect(await series('sdx_jobs_finished_total', { ...labels, status: 'completed' })).toBe(before.completed + 1);
    expect(await series('sdx_jobs_finished_total', { ...labels, status: 'failed' })).toBe(before.failed + 1);
    expect(await series('sdx_credits_settled_total', {})).toBe(before.settled + 20);
    const text = (await stack.api.get('/metrics')).text;
    expect(text).toMatch(/sdx_job_queue_wait_seconds_count\{platform="twitter"\} [1-9]/);
    expect(text).toMatch(/sdx_job_run_seconds_count\{platform="twitter"\} [1-9]/);
  });
});
