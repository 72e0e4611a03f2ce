import ExcelJS from 'exceljs';
import { sql } from 'kysely';
import request from 'supertest';
import { moveResults, purgeExpiredResults, resultPages, resultsOf, sweepOrphanedObjects } from '@sdx/domain/testing';
import {
  eventually,
  type LoopbackS3,
  runAdmin,
  type SeededWorkspace,
  startLoopbackS3,
  startTestStack,
  type TestStack,
  waitForJob,
} from '@sdx/testing';

/**
 * RESULT_STORE=s3 (extensions-2.md 5) against a loopback S3: results written as objects while
 * Postgres keeps only their metadata; every read path (a job's result, its items, each export
 * format, batch exports, the list, a cached job, new_only) answers the same bytes as the
 * Postgres store, checked by reading everything, moving the results into Postgres
 * (move-results), reading again, and moving them back; a store that is down fails attempts as
 * retryable (never the job) and reads as 503; retention and the sweeper delete objects.
 */

const BUCKET = 'sdx-results';
let s3: LoopbackS3;
let stack: TestStack;
let ws: SeededWorkspace;

beforeAll(async () => {
  s3 = await startLoopbackS3([BUCKET]);
  stack = await startTestStack({
    withWorker: true,
    env: {
      RESULT_STORE: 's3',
      S3_ENDPOINT: s3.endpoint,
      S3_BUCKET: BUCKET,
      S3_REGION: s3.region,
      S3_ACCESS_KEY_ID: s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      S3_FORCE_PATH_STYLE: '1',
    },
  });
  ws = await stack.workspace({ credits: 100_000, rateLimitPerMinute: 100_000 });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await s3?.stop();
});

async function objectKeys(): Promise<string[]> {
  const keys: string[] = [];
  for await (const page of stack.runtime.services.resultObjects!.list()) keys.push(...page.map((o) => o.key));
  return keys;
}

/** Result bytes Postgres holds: items of pages with any. */
async function rowItems(): Promise<number> {
  const { rows } = await sql<{
    n: number;
  }>`select count(*)::int as n from job_result_pages where items is not null and item_count > 0`.execute(stack.runtime.db);
  return rows[0].n;
}

async function completed(jobId: string) {
  return waitForJob(stack, ws.auth, jobId, (j) => j.status === 'completed' || j.status === 'failed', 60_000);
}

/** Every read of the jobs and the batch, as the bytes the API answered (xlsx: its cells). */
async function readEverything(jobIds: string[], batchId: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const get = async (path: string) => {
    const res = await stack.api.get(path, { headers: ws.auth });
    expect(res.status).toBe(200);
    return res;
  };
  // Many results at once (a monitor run's completion): each the items resultPages reads for it alone.
  const rows = await stack.runtime.db.selectFrom('jobs').select(['id', 'source_job_id']).where('id', 'in', jobIds).orderBy('id').execute();
  const bulk = await resultsOf(stack.runtime.services, rows);
  for (const row of rows) {
    const one: unknown[] = [];
    for await (const page of resultPages(stack.runtime.services, row)) one.push(...page);
    expect(one.length).toBeGreaterThan(0);
    expect(bulk.get(row.id)).toEqual(one);
  }
  out['results of the jobs at once'] = JSON.stringify(rows.map((row) => bulk.get(row.id)));
  for (const id of jobIds) {
    // The job's fields change with nothing here; its result is the part under test.
    out[`${id} job`] = (await get(`/v1/jobs/${id}`)).text;
    for (const format of ['json', 'ndjson', 'csv']) out[`${id} ${format}`] = (await get(`/v1/jobs/${id}/export?format=${format}`)).text;
    out[`${id} xlsx`] = await xlsxCells(`/v1/jobs/${id}/export?format=xlsx`);
    let cursor: string | null = null;
    let page = 0;
    do {
      const res = await get(`/v1/jobs/${id}/items?limit=333${cursor ? `&cursor=${cursor}` : ''}`);
      out[`${id} items ${page++}`] = res.text;
      cursor = res.body.next_cursor as string | null;
    } while (cursor);
  }
  for (const format of ['json', 'ndjson', 'csv'])
    out[`batch ${format}`] = (await get(`/v1/batches/${batchId}/export?format=${format}`)).text;
  out['batch xlsx'] = await xlsxCells(`/v1/batches/${batchId}/export?format=xlsx`);
  out.list = (await get(`/v1/jobs?limit=100&include_result=true`)).text;
  return out;
}

async function xlsxCells(path: string): Promise<string> {
  // supertest does not buffer an xlsx body by itself.
  const res = await request(stack.app)
    .get(path)
    .set(ws.auth)
    .buffer(true)
    .parse((response, done) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => done(null, Buffer.concat(chunks)));
    });
  expect(res.status).toBe(200);
  const book = new ExcelJS.Workbook();
  await book.xlsx.load(res.body);
  const rows: unknown[] = [];
  book.worksheets[0].eachRow((row) => rows.push(row.values));
  return JSON.stringify(rows);
}

it('answers every read with the same bytes from objects as from rows, and Postgres holds no result bytes', async () => {
  const post = async (body: Record<string, unknown>) => {
    const res = await stack.api.post('/v1/jobs', { headers: ws.auth, body });
    expect([202, 200].includes(res.status) ? 'accepted' : res.body).toBe('accepted');
    return res.body.id as string;
  };
  // A 2,500-follower result (3 stored pages), a profile bundle, posts with text, and a twin served from the cache.
  const followers = await post({ platform: 'twitter', operation: 'followers', target: 's3_followers', limit: 2500 });
  const bundle = await post({ platform: 'instagram', operation: 'profile', target: 's3_bundle', include_posts: 12 });
  const posts = await post({ platform: 'tiktok', operation: 'posts', target: 's3_posts', limit: 200 });
  // Small jobs completed together: their last pages share objects, each page a part at its offset.
  const small = await Promise.all(
    Array.from({ length: 8 }, (_, i) => post({ platform: 'tiktok', operation: 'profile', target: `s3_small_${i}` })),
  );
  for (const id of [followers, bundle, posts, ...small]) expect((await completed(id)).status).toBe('completed');
  const cached = await post({ platform: 'twitter', operation: 'followers', target: 's3_followers', limit: 2500 });
  const twin = await completed(cached);
  expect(twin.status).toBe('completed');
  const batch = await stack.api.post('/v1/batches', {
    headers: ws.auth,
    body: { platform: 'twitter', operation: 'followers', targets: ['s3_b1', 's3_b2', 's3_b3'], limit: 1200 },
  });
  expect(batch.status).toBe(202);
  await eventually(async () => {
    const res = await stack.api.get(`/v1/batches/${batch.body.id}`, { headers: ws.auth });
    return res.body.status === 'completed';
  }, 60_000);

  // Written as objects: Postgres holds their keys and sizes only.
  expect(await rowItems()).toBe(0);
  const keys = await objectKeys();
  // Checkpointed pages are objects of their own; the last pages of jobs completed together share one.
  expect(keys.length).toBeGreaterThanOrEqual(2 + 1 + 1 + 3);
  const { rows: meta } = await sql<{ n: number; bytes: number }>`
    select count(distinct object_key)::int as n, sum(stored_bytes)::int as bytes from job_result_pages where object_key is not null`.execute(
    stack.runtime.db,
  );
  expect(meta[0].n).toBe(keys.length);
  expect(meta[0].bytes).toBeGreaterThan(0);

  const jobs = [followers, bundle, posts, cached, ...small];
  const fromObjects = await readEverything(jobs, batch.body.id);
  expect(JSON.parse(fromObjects[`${followers} job`]).result).toHaveLength(2500);
  expect(JSON.parse(fromObjects[`${bundle} job`]).result.posts.length).toBeGreaterThan(0);

  // Into Postgres, while nothing else changes: the same bytes from rows, and no object left.
  const toRows = await moveResults(stack.runtime.services, 'postgres', { batch: 2 });
  expect(toRows.total).toBe(toRows.moved);
  expect(toRows.moved).toBe(6 + small.length);
  expect(await objectKeys()).toEqual([]);
  expect(await rowItems()).toBeGreaterThan(0);
  const fromRows = await readEverything(jobs, batch.body.id);
  expect(fromRows).toEqual(fromObjects);

  // And back.
  const progress: number[] = [];
  const toObjects = await moveResults(stack.runtime.services, 's3', { batch: 4, onProgress: (p) => progress.push(p.moved) });
  expect(toObjects.moved).toBe(6 + small.length);
  expect(progress).toEqual([0, 4, 8, 12, 14]);
  expect(await rowItems()).toBe(0);
  expect(await readEverything(jobs, batch.body.id)).toEqual(fromObjects);
  // Nothing left to move: a second run moves nothing.
  expect((await moveResults(stack.runtime.services, 's3')).moved).toBe(0);
}, 180_000);

it('keeps only the new items of a new_only schedule in objects', async () => {
  const sch = await stack.api.post('/v1/schedules', {
    headers: ws.auth,
    body: {
      name: 'feed',
      platform: 'tiktok',
      operation: 'search',
      targets: ['sandbox_rolling_20 s3feed'],
      limit: 200,
      frequency: 'daily',
      timezone: 'UTC',
      starts_at: '2030-01-01T00:00:00Z',
      delivery: 'new_only',
    },
  });
  expect([sch.status, sch.body]).toEqual([201, expect.anything()]);
  const run = async () => {
    const res = await stack.api.post(`/v1/schedules/${sch.body.id}/run`, { headers: ws.auth });
    expect(res.status).toBe(202);
    return completed((res.body.runs?.[0]?.job_id ?? res.body.job_id) as string);
  };
  const first = await run();
  expect(first.result_count).toBe(200);
  await new Promise((resolve) => setTimeout(resolve, 1200));
  const second = await run();
  const ids = (job: Record<string, unknown>) => (job.result as Array<{ id: string }>).map((item) => item.id);
  expect(second.result_count).toBeGreaterThan(0);
  expect(second.result_count).toBeLessThan(200);
  expect(ids(second)).toHaveLength(second.result_count);
  expect(ids(second).filter((id) => ids(first).includes(id))).toEqual([]);
  const csv = await stack.api.get(`/v1/jobs/${second.id}/export?format=csv`, { headers: ws.auth });
  expect(csv.text.trim().split('\n')).toHaveLength(second.result_count + 1);
  expect(await rowItems()).toBe(0);
}, 60_000);

it('fails attempts, never jobs, while the store is down; reads answer 503; the job completes once it is back', async () => {
  const done = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'twitter', operation: 'followers', target: 's3_down_read', limit: 50 },
  });
  await completed(done.body.id);
  await s3.pause();
  try {
    const read = await stack.api.get(`/v1/jobs/${done.body.id}/items`, { headers: ws.auth });
    expect(read.status).toBe(503);
    expect(read.body.detail.error).toBe('service_unavailable');
    expect(read.headers['retry-after']).toBeDefined();
    const exported = await stack.api.get(`/v1/jobs/${done.body.id}/export?format=csv`, { headers: ws.auth });
    expect(exported.status).toBe(503);

    const job = await stack.api.post('/v1/jobs', {
      headers: ws.auth,
      body: { platform: 'twitter', operation: 'followers', target: 's3_down_write', limit: 50 },
    });
    expect(job.status).toBe(202);
    // Several attempts fail on the store; the job waits, its attempts given back.
    await eventually(async () => {
      const row = await stack.runtime.db
        .selectFrom('jobs')
        .select(['status', 'progress_message', 'attempts'])
        .where('id', '=', job.body.id)
        .executeTakeFirstOrThrow();
      return row.status === 'queued' && /result store/.test(row.progress_message ?? '') ? row : undefined;
    }, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const waiting = await stack.runtime.db
      .selectFrom('jobs')
      .select(['status', 'attempts'])
      .where('id', '=', job.body.id)
      .executeTakeFirstOrThrow();
    expect(['queued', 'running']).toContain(waiting.status);
    expect(waiting.attempts).toBeLessThanOrEqual(1);
    await s3.resume();
    const finished = await completed(job.body.id);
    // Billed once, at twitter followers' rate (2 credits an item), whatever the failed attempts.
    expect(finished).toMatchObject({ status: 'completed', result_count: 50, billed_credits: 100 });
  } finally {
    await s3.resume().catch(() => undefined);
  }
}, 90_000);

it('moves results both ways from the admin CLI, with a progress bar, and refuses a store it does not know', async () => {
  const admin = async (...args: string[]) =>
    runAdmin(args, {
      ...process.env,
      DATABASE_URL: stack.databaseUrl,
      LOG_LEVEL: 'silent',
      S3_ENDPOINT: s3.endpoint,
      S3_BUCKET: BUCKET,
      S3_ACCESS_KEY_ID: s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      S3_FORCE_PATH_STYLE: '1',
    });
  expect(await rowItems()).toBe(0);
  const before = (await objectKeys()).length;
  const back = await admin('move-results', '--to', 'postgres', '--batch', '3', '--json');
  const moved = JSON.parse(back.stdout.trim()) as { moved: number; total: number; interrupted: boolean };
  expect(moved.moved).toBe(moved.total);
  expect(moved.moved).toBeGreaterThan(0);
  expect(moved.interrupted).toBe(false);
  expect(back.stderr).toMatch(/moving results to postgres \[#+\] 100% /);
  expect(await objectKeys()).toEqual([]);
  expect(await rowItems()).toBeGreaterThan(0);
  const there = await admin('move-results', '--to', 's3');
  expect(there.stdout).toMatch(new RegExp(`^${moved.total} of ${moved.total} jobs' results moved to s3`));
  expect(await rowItems()).toBe(0);
  expect((await objectKeys()).length).toBe(before);
  await expect(admin('move-results', '--to', 'gcs')).rejects.toMatchObject({
    code: 2,
    stderr: expect.stringContaining('--to is s3 or postgres'),
  });
}, 90_000);

it('deletes the objects of expired results, and the sweeper deletes objects no page names', async () => {
  const job = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'twitter', operation: 'followers', target: 's3_expiring', limit: 1500 },
  });
  await completed(job.body.id);
  const rows = await stack.runtime.db
    .selectFrom('job_result_pages')
    .select('object_key')
    .where('job_id', '=', job.body.id)
    .orderBy('page_no')
    .execute();
  // Its first page checkpointed as an object of its own, its last written at completion.
  const own = rows.map((row) => row.object_key!);
  expect(own).toHaveLength(2);
  expect(own[0]).toMatch(new RegExp(`^results/${job.body.id}/1-[0-9a-f]+\\.ndjson\\.gz$`));

  // An orphan: an object whose attempt never committed its row.
  await stack.runtime.services.resultObjects!.put('job_orphan', 1, ['{"id": "x"}']);
  const sweep = { after: null };
  const swept = await sweepOrphanedObjects(stack.runtime.services, sweep, { graceMs: 0 });
  expect(swept.deleted).toBe(1);
  const left = await objectKeys();
  expect(left.some((key) => key.startsWith('results/job_orphan/'))).toBe(false);
  expect(left).toEqual(expect.arrayContaining(own));

  const later = new Date(Date.now() + 400 * 24 * 3600_000);
  const purged = await purgeExpiredResults(stack.runtime.services, later, 30);
  expect(purged.jobs).toBeGreaterThan(0);
  expect(await objectKeys()).toEqual([]);
}, 60_000);
