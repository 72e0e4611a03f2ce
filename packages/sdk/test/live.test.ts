import type { Batch, Client, Job } from '@sdx/sdk';
import { type SeededWorkspace, type ServedStack, startServedStack } from '@sdx/testing';
import { clientFor, type Sent } from './support';

/** jobs.wait and batches.wait on the service's live event streams (extensions.md 6), and the raw events. */

let served: ServedStack;
beforeAll(async () => {
  served = await startServedStack({ withWorker: true, env: { SANDBOX_LATENCY_MS: '40' } });
});
afterAll(async () => {
  await served.close();
});

let ws: SeededWorkspace;
let sent: Sent[];
let sdx: Client;
beforeEach(async () => {
  ws = await served.stack.workspace({ credits: 100_000 });
  sent = [];
  sdx = clientFor(served.url, ws, { sent });
});

it('waits for a job on its event stream, with each page of progress, and reads the result once at the end', async () => {
  const job = await sdx.jobs.create({ platform: 'twitter', operation: 'followers', target: 'nasa', limit: 5000 });
  const seen: Job[] = [];
  const done = await sdx.jobs.wait(job.id, { onProgress: (state) => seen.push(state) });
  expect(done).toMatchObject({ status: 'completed', result_count: 5000 });
  expect(Array.isArray(done.result) && done.result.length).toBe(5000);
  const progress = seen.map((s) => s.progress_current);
  expect(progress.filter((n) => n > 0 && n < 5000).length).toBeGreaterThan(0);
  expect([...progress].sort((a, b) => a - b)).toEqual(progress);
  expect(sent.map((s) => `${s.method} ${s.path}`)).toEqual([`POST /v1/jobs`, `GET /v1/jobs/${job.id}/events`, `GET /v1/jobs/${job.id}`]);
});

it("reads a job's raw events: its current state first, the stream ending after the terminal one", async () => {
  const job = await sdx.jobs.extract({ platform: 'instagram', operation: 'profile', target: 'natgeo' });
  const events: Array<{ event: string; job: Job }> = [];
  for await (const event of sdx.jobs.events(job.id)) events.push(event);
  expect(events).toHaveLength(1);
  expect(events[0].job).toMatchObject({ id: job.id, status: 'completed', result: null });
});

it('waits for a batch on its event stream', async () => {
  const batch = await sdx.batches.create({ platform: 'instagram', operation: 'posts', targets: ['natgeo', 'nasa', 'esa'], limit: 20 });
  const seen: Batch[] = [];
  const done = await sdx.batches.wait(batch.id, { onProgress: (state) => seen.push(state) });
  expect(done).toMatchObject({ status: 'completed', completed_count: 3 });
  expect(seen.at(-1)!.status).toBe('completed');
  expect(sent.filter((s) => s.path === `/v1/batches/${batch.id}`)).toHaveLength(1);
});
