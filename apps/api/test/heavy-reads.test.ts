import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { COUNTS_FOR_MS, HeavyReads, RedisRateLimiter, YIELD_MAX_MS } from '@sdx/app-api';
import { createApp } from '@sdx/app-api';
import { ContractClient, eventually, startTestStack, type SeededWorkspace, type TestStack } from '@sdx/testing';
import { jobChunks, writeAll } from '../src/routes/job-body';

/**
 * Heavy reads are streamed and bounded: a job's result goes out slice by slice as it is read,
 * the next slice read only once the last one is written, so a slow client holds one slice; and
 * a workspace streams at most HEAVY_READS_PER_WORKSPACE large results at once per process (429
 * concurrent_read_limit_exceeded beyond), while other workspaces and small reads go on.
 */

let stack: TestStack;
let ws: SeededWorkspace;
let bigJobId: string;
let smallJobId: string;

beforeAll(async () => {
  stack = await startTestStack({ withWorker: true });
  ws = await stack.workspace({ credits: 20_000 });
  const big = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'twitter', operation: 'followers', target: 'heavyreads', limit: 6_000 },
  });
  const small = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'twitter', operation: 'profile', target: 'smallread' },
  });
  bigJobId = big.body.id;
  smallJobId = small.body.id;
  await eventually(async () => {
    const rows = await stack.runtime.db.selectFrom('jobs').select('status').where('id', 'in', [bigJobId, smallJobId]).execute();
    return rows.every((r) => r.status === 'completed');
  }, 30_000);
}, 60_000);
afterAll(async () => {
  await stack.close();
});

it('GET streams a large result whole and in order, in slices', async () => {
  const res = await stack.api.get(`/v1/jobs/${bigJobId}`, { headers: ws.auth });
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(res.body).toMatchObject({ id: bigJobId, status: 'completed', result_count: 6_000 });
  const items = res.body.result as Array<{ id: string }>;
  expect(items).toHaveLength(6_000);
  expect(new Set(items.map((i) => i.id)).size).toBe(6_000);
  // The same items, in the same order, as the pages hold them.
  const pages = await stack.runtime.db
    .selectFrom('job_result_pages')
    .select('items')
    .where('job_id', '=', bigJobId)
    .orderBy('page_no')
    .execute();
  expect(items.map((i) => i.id)).toEqual(pages.flatMap((p) => (p.items as Array<{ id: string }>).map((i) => i.id)));
  // The list streams the same way.
  const list = await stack.api.get('/v1/jobs', { headers: ws.auth, query: { limit: 5 } });
  expect(list.status).toBe(200);
  const listed = (list.body as Array<{ id: string; result: unknown[] | null }>).find((j) => j.id === bigJobId)!;
  expect(listed.result).toHaveLength(6_000);
});

it('reads the next slice only once the client has taken the last one (backpressure)', async () => {
  const job = await stack.runtime.db.selectFrom('jobs').selectAll().where('id', '=', bigJobId).executeTakeFirstOrThrow();
  const written: string[] = [];
  const waiting: Array<() => void> = [];
  // A client that takes nothing until let go: its buffer is full after the first chunk.
  const slow = new Writable({
    highWaterMark: 1024,
    decodeStrings: false,
    write(chunk: string, _encoding, callback) {
      written.push(chunk);
      waiting.push(() => callback());
    },
  });
  const done = writeAll(slow, jobChunks(stack.runtime.services, job, {}));
  await new Promise((resolve) => setTimeout(resolve, 300));
  // The job's fields and at most one slice (100 items).
  expect(written.length).toBeLessThanOrEqual(2);
  expect(written.join('').length).toBeLessThan(100_000);
  const release = setInterval(() => waiting.splice(0).forEach((go) => go()), 1);
  await done;
  clearInterval(release);
  const body = JSON.parse(written.join('')) as { result: Array<{ id: string }> };
  expect(body.result).toHaveLength(6_000);
  // Six pages of 1,000 followers in slices of 100 items: the fields, '[', 60 slices, ']', '}'.
  expect(written.length).toBeGreaterThanOrEqual(60);
});

/** A client of an app of the test stack's services with these heavy-read bounds. */
function clientWith(heavyReads: HeavyReads): ContractClient {
  return new ContractClient(
    createApp({
      services: stack.runtime.services,
      registry: stack.runtime.registry,
      limiter: new RedisRateLimiter(stack.runtime.redis, stack.config.redisPrefix),
      redis: stack.runtime.redis,
      heavyReads,
    }),
  );
}

describe('the per-workspace bound on heavy reads', () => {
  const heavyReads = new HeavyReads(1, 1_000);
  let api: ContractClient;
  beforeAll(() => {
    api = clientWith(heavyReads);
  });

  it('answers 429 concurrent_read_limit_exceeded beyond it, for that workspace and large reads only', async () => {
    // One large read of the workspace in progress.
    const inProgress = new EventEmitter();
    heavyReads.admit(inProgress, ws.workspaceId, 6_000, stack.runtime.db);
    expect(heavyReads.running(ws.workspaceId)).toBe(1);

    for (const path of [`/v1/jobs/${bigJobId}`, `/v1/jobs/${bigJobId}/export?format=csv`, '/v1/jobs']) {
      const refused = await api.get(path, { headers: ws.auth });
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.body.detail).toMatchObject({ error: 'concurrent_read_limit_exceeded', active: 1, limit: 1 });
    }
    // A small result of the same workspace is not a heavy read.
    expect((await api.get(`/v1/jobs/${smallJobId}`, { headers: ws.auth })).status).toBe(200);
    // Another workspace is not bounded by this one's reads.
    const other = await stack.workspace({ credits: 100 });
    expect(heavyReads.running(other.workspaceId)).toBe(0);

    // Once the read in progress ends, the next one goes.
    inProgress.emit('close');
    expect(heavyReads.running(ws.workspaceId)).toBe(0);
    const allowed = await api.get(`/v1/jobs/${bigJobId}`, { headers: ws.auth });
    expect(allowed.status).toBe(200);
    expect(allowed.body.result).toHaveLength(6_000);
    // Its place is given back when its response closes.
    expect(heavyReads.running(ws.workspaceId)).toBe(0);
  });
});

describe("the heavy reads' pool", () => {
  it('runs the slice queries of every heavy read, of any workspace, on its own connections, taking turns', async () => {
    const heavyReads = HeavyReads.fromConfig({ ...stack.config, heavyReadConnections: 1 });
    const client = clientWith(heavyReads);
    // The heavy-reads backends, by process ID.
    const backends = async () => {
      const { rows } = await sql<{
        pid: number;
      }>`select pid from pg_stat_activity where datname = current_database() and application_name = 'api-heavy-reads'`.execute(
        stack.runtime.db,
      );
      return rows.map((row) => row.pid);
    };
    try {
      // A second workspace with a large result of its own.
      const other = await stack.workspace({ credits: 20_000 });
      const created = await stack.api.post('/v1/jobs', {
        headers: other.auth,
        body: { platform: 'twitter', operation: 'followers', target: 'heavyreads2', limit: 3_000 },
      });
      await eventually(
        async () =>
          (await stack.runtime.db.selectFrom('jobs').select('status').where('id', '=', created.body.id).executeTakeFirstOrThrow())
            .status === 'completed',
        30_000,
      );
      // The test stack's own heavy-reads pool may hold a connection already (earlier tests), which
      // may also close meanwhile: only the backends opened since count.
      const before = new Set(await backends());
      const opened = async () => (await backends()).filter((pid) => !before.has(pid)).length;

      let most = 0;
      const sampling = setInterval(() => void opened().then((n) => (most = Math.max(most, n))), 20);
      const [a, b, c, small] = await Promise.all([
        client.get(`/v1/jobs/${bigJobId}`, { headers: ws.auth }),
        client.get(`/v1/jobs/${created.body.id}/export`, { headers: other.auth, query: { format: 'ndjson' } }),
        client.get(`/v1/jobs/${bigJobId}/export`, { headers: ws.auth, query: { format: 'csv' } }),
        client.get(`/v1/jobs/${smallJobId}`, { headers: ws.auth }),
      ]);
      clearInterval(sampling);
      // Every read whole, the heavy ones through one connection.
      expect(a.status).toBe(200);
      expect(a.body.result).toHaveLength(6_000);
      expect(b.status).toBe(200);
      expect(b.text.trim().split('\n')).toHaveLength(3_000);
      expect(c.status).toBe(200);
      expect(c.text.trim().split('\n')).toHaveLength(6_001);
      expect(small.status).toBe(200);
      expect(await opened()).toBe(1);
      expect(most).toBeLessThanOrEqual(1);
      await heavyReads.close();
      // Its connection ends with it (the backend goes a moment after the client has closed).
      await eventually(async () => (await opened()) === 0, 5_000);
    } finally {
      await heavyReads.close();
    }
  });
});

describe('light requests first', () => {
  const milliseconds = async (work: Promise<unknown>) => {
    const started = performance.now();
    await work;
    return performance.now() - started;
  };

  it('gives a heavy slice its turn at once when no request is in progress, else once they are answered or after YIELD_MAX_MS', async () => {
    const heavyReads = new HeavyReads(2, 1_000);
    expect(await milliseconds(heavyReads.turn())).toBeLessThan(YIELD_MAX_MS);

    // A request in progress: the slice waits until it is answered.
    const request = new EventEmitter();
    heavyReads.started(request);
    expect(heavyReads.requestsInProgress()).toBe(1);
    let given = false;
    const turn = heavyReads.turn().then(() => (given = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(given).toBe(false);
    request.emit('finish');
    await turn;
    expect(heavyReads.requestsInProgress()).toBe(0);

    // One that is never answered holds each slice back by YIELD_MAX_MS at most.
    const stuck = new EventEmitter();
    heavyReads.started(stuck);
    const waited = await milliseconds(heavyReads.turn());
    expect(waited).toBeGreaterThanOrEqual(YIELD_MAX_MS - 2);
    expect(waited).toBeLessThan(COUNTS_FOR_MS);
    stuck.emit('finish');
    expect(heavyReads.requestsInProgress()).toBe(0);
  });

  it('stops counting a request after COUNTS_FOR_MS, and a heavy read once it is admitted', async () => {
    const heavyReads = new HeavyReads(2, 1_000);
    const stream = new EventEmitter();
    heavyReads.started(stream);
    await new Promise((resolve) => setTimeout(resolve, COUNTS_FOR_MS + 50));
    expect(heavyReads.requestsInProgress()).toBe(0);

    const small = new EventEmitter();
    const large = new EventEmitter();
    heavyReads.started(small);
    heavyReads.started(large);
    heavyReads.admit(small, ws.workspaceId, 10, stack.runtime.db);
    heavyReads.admit(large, ws.workspaceId, 6_000, stack.runtime.db);
    // The small read is a light request; the large one no longer counts.
    expect(heavyReads.requestsInProgress()).toBe(1);
    small.emit('finish');
    large.emit('finish');
    expect(heavyReads.requestsInProgress()).toBe(0);
  });

  it('reads a large result whole while another request stays in progress, its slices held back but never stopped', async () => {
    const heavyReads = HeavyReads.fromConfig(stack.config);
    // The time each slice spent waiting for its turn (the pool's hook calls turn() on the instance).
    const turn = heavyReads.turn.bind(heavyReads);
    let waited = 0;
    heavyReads.turn = async () => {
      const started = performance.now();
      await turn();
      waited += performance.now() - started;
    };
    const client = clientWith(heavyReads);
    try {
      const alone = await client.get(`/v1/jobs/${bigJobId}`, { headers: ws.auth });
      expect(alone.body.result).toHaveLength(6_000);
      // Alone, no slice waits: the read itself stops counting once admitted.
      expect(waited).toBeLessThan(20);
      waited = 0;
      // A request that is never answered (a live stream, say) is in progress from here on.
      heavyReads.started(new EventEmitter());
      let res: Awaited<ReturnType<ContractClient['get']>> | null = null;
      const held = await milliseconds(client.get(`/v1/jobs/${bigJobId}`, { headers: ws.auth }).then((r) => (res = r)));
      expect(res!.status).toBe(200);
      expect(res!.body.result).toHaveLength(6_000);
      // 60 slices, each of which waited its YIELD_MAX_MS while the request counted (its first second).
      expect(held).toBeGreaterThanOrEqual(Math.min(60 * YIELD_MAX_MS, COUNTS_FOR_MS) - 50);
      // Held back: slices waited their turns (measured as waits, not against the read alone, whose
      // time a loaded machine stretches as much as the waits), and the read went on through them.
      expect(waited).toBeGreaterThanOrEqual(4 * YIELD_MAX_MS);
      expect(held).toBeGreaterThanOrEqual(waited);
      expect(heavyReads.requestsInProgress()).toBe(0);
    } finally {
      await heavyReads.close();
    }
  });
});
