import http from 'node:http';
import type { Server } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type IORedis from 'ioredis';
import { listen, type SeededWorkspace, startTestStack, type TestStack, type LooseJson } from '@sdx/testing';

/**
 * Live progress over Server-Sent Events (extensions.md 6), through a real socket: the first
 * event is the current state, then an event per change of status or progress, each within a
 * second of the change, and the stream ends after the terminal state. Changes travel from the
 * worker over Redis pub/sub; the API process holds one subscriber connection and releases
 * everything a stream held when its client goes (1,000 streams opened and dropped).
 */
let stack: TestStack;
let server: Server;
let base: string;
let ws: SeededWorkspace;

beforeAll(async () => {
  // A thousand streams of one workspace at once, past the default MAX_STREAMS_PER_WORKSPACE.
  stack = await startTestStack({ withWorker: true, env: { MAX_STREAMS_PER_WORKSPACE: '2000' } });
  ({ url: base, server } = await listen(stack.app));
  ws = await stack.workspace({ credits: 100_000, rateLimitPerMinute: 100_000 });
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await stack.close();
});

interface SseEvent {
  event: string;
  data: Record<string, LooseJson>;
  at: number;
}

interface SseStream {
  status: number;
  headers: http.IncomingHttpHeaders;
  events: SseEvent[];
  comments: number;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  request: http.ClientRequest;
}

/** Opens a stream and parses its events as they arrive. */
function open(path: string, headers: Record<string, string> = ws.auth): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${base}${path}`, { headers, agent: false }, (res) => {
      const stream: SseStream = {
        status: res.statusCode!,
        headers: res.headers,
        events: [],
        comments: 0,
        ended: new Promise((done) => res.on('end', done)),
        request,
      };
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          if (block.startsWith(':')) {
            stream.comments += 1;
            continue;
          }
          const fields = Object.fromEntries(
            block.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]),
          );
          stream.events.push({ event: fields.event, data: JSON.parse(fields.data), at: Date.now() });
        }
      });
      res.on('error', () => undefined);
      resolve(stream);
    });
    request.on('error', reject);
  });
}

async function until(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

it('shows a sandbox_slow_ job page by page, within a second of each page, and ends at its terminal state', async () => {
  // Three pages of 100 items, 2 s each: the stream is open well before the first is saved.
  const created = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'youtube', operation: 'playlist_items', target: 'PLlive_sandbox_slow_2000', limit: 300 },
  });
  const stream = await open(`/v1/jobs/${created.body.id}/events`);
  expect(stream.status).toBe(200);
  expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8');
  expect(stream.headers['cache-control']).toBe('no-cache, no-transform');
  await stream.ended;

  const [first, ...rest] = stream.events;
  expect(first.event).toBe('status');
  expect(['queued', 'running']).toContain(first.data.status);
  const progress = stream.events.filter((e) => e.event === 'progress' && e.data.progress_current > 0);
  expect(progress.map((e) => e.data.progress_current)).toEqual([100, 200]);
  for (const page of progress) {
    // heartbeat_at is the time the page was saved (the same statement).
    expect(page.at - Date.parse(page.data.heartbeat_at)).toBeLessThan(1000);
    expect(page.data.status).toBe('running');
  }
  const last = rest[rest.length - 1];
  expect(last).toMatchObject({ event: 'status', data: { status: 'completed', progress_current: 300, result: null } });
  expect(stream.events.every((e) => e.data.id === created.body.id && e.data.result === null)).toBe(true);
  // Every event shows something the one before did not.
  const shown = stream.events.map((e) => JSON.stringify({ ...e.data, heartbeat_at: null }));
  expect(new Set(shown).size).toBe(shown.length);
});

it('shows a batch until it completes', async () => {
  const created = await stack.api.post('/v1/batches', {
    headers: ws.auth,
    body: { operation: 'posts', limit: 200, targets: ['lb_sandbox_slow_300', 'lb2_sandbox_slow_300'] },
  });
  const stream = await open(`/v1/batches/${created.body.id}/events`);
  await stream.ended;
  expect(stream.events[0].event).toBe('status');
  const last = stream.events[stream.events.length - 1];
  expect(last).toMatchObject({ event: 'status', data: { id: created.body.id, status: 'completed', completed_count: 2 } });
  expect(stream.events.every((e) => e.data.jobs === undefined)).toBe(true);
});

it('answers a finished job with one event and ends; another workspace gets 404', async () => {
  const created = await stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'profile', target: 'live_done' } });
  for (let i = 0; i < 200; i++) {
    if ((await stack.api.get(`/v1/jobs/${created.body.id}`, { headers: ws.auth })).body.status === 'completed') break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const stream = await open(`/v1/jobs/${created.body.id}/events`);
  await stream.ended;
  expect(stream.events).toEqual([expect.objectContaining({ event: 'status', data: expect.objectContaining({ status: 'completed' }) })]);

  const other = await stack.workspace();
  const foreign = await stack.api.get(`/v1/jobs/${created.body.id}/events`, { headers: other.auth });
  expect([foreign.status, foreign.body.detail.error]).toEqual([404, 'job_not_found']);
  const batch = await stack.api.get('/v1/batches/bat_missing/events', { headers: ws.auth });
  expect([batch.status, batch.body.detail.error]).toEqual([404, 'batch_not_found']);
});

it('releases everything when 1,000 clients open streams and drop them', async () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const job = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { operation: 'posts', limit: 200, target: 'crowd_sandbox_slow_30000' },
  });
  const others = await Promise.all(
    [1, 2, 3].map((i) =>
      stack.api.post('/v1/jobs', { headers: ws.auth, body: { operation: 'posts', limit: 200, target: `crowd${i}_sandbox_slow_30000` } }),
    ),
  );
  const ids = [job.body.id, ...others.map((r) => r.body.id)] as string[];
  const subscriber = () => (stack.live as unknown as { subscriber: IORedis | null }).subscriber;
  const channels = async () => {
    const reply = (await stack.runtime.redis.call(
      'PUBSUB',
      'NUMSUB',
      ...ids.map((id) => `${stack.config.redisPrefix}:live:job:${id}`),
    )) as Array<string | number>;
    return reply.filter((_, i) => i % 2 === 1).map(Number);
  };
  // One stream first: the subscriber connection exists from then on, before the baseline.
  const warm = await open(`/v1/jobs/${ids[0]}/events`);
  await until(() => warm.events.length > 0);
  warm.request.destroy();
  await until(() => stack.live.stats().streams === 0);
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const listenersBefore = subscriber()!.listenerCount('message');

  const streams: SseStream[] = [];
  for (let i = 0; i < 1000; i += 100) {
    streams.push(...(await Promise.all(Array.from({ length: 100 }, (_, k) => open(`/v1/jobs/${ids[(i + k) % ids.length]}/events`)))));
  }
  await until(() => stack.live.stats().streams === 1000 && streams.every((s) => s.events.length > 0), 30_000);
  expect(streams.every((s) => s.status === 200)).toBe(true);
  expect(stack.live.stats()).toEqual({ streams: 1000, topics: 4 });
  expect(await channels()).toEqual([1, 1, 1, 1]);

  for (const stream of streams) stream.request.destroy();
  await until(() => stack.live.stats().streams === 0, 30_000);
  expect(stack.live.stats()).toEqual({ streams: 0, topics: 0 });
  for (let i = 0; i < 100 && (await channels()).some((n) => n > 0); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(await channels()).toEqual([0, 0, 0, 0]);
  expect(subscriber()!.listenerCount('message')).toBe(listenersBefore);
  streams.length = 0;
  await new Promise((resolve) => setTimeout(resolve, 200));
  gc();
  const grown = process.memoryUsage().heapUsed - heapBefore;
  // 1,000 streams held far more than this while open; what is left is noise of the test itself.
  expect(grown).toBeLessThan(8 * 1024 * 1024);
  for (const id of ids) await stack.api.post(`/v1/jobs/${id}/cancel`, { headers: ws.auth });
}, 120_000);
