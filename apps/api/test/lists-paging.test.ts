import { eventually, type SeededWorkspace, startTestStack, type TestStack } from '@sdx/testing';

/**
 * GET /v1/jobs, /v1/batches and /v1/schedules page by page (extensions.md 7): newest first,
 * `starting_after` and `Link: <…>; rel="next"` until the oldest, the filters of GET /v1/jobs
 * alone and together, include_result=false, and the 422 of a `starting_after` that names nothing
 * of the workspace.
 */

let stack: TestStack;
let ws: SeededWorkspace;
let other: SeededWorkspace;
let batchId: string;
let scheduleId: string;
/** Every job of the workspace, newest first, as the database orders them. */
let all: Array<{ id: string; status: string; platform: string; operation: string; batch_id: string | null; schedule_id: string | null }>;

const post = async (path: string, body: unknown, who: SeededWorkspace = ws) => {
  const res = await stack.api.post(path, { headers: who.auth, body });
  expect(res.status).toBeLessThan(300);
  return res.body as { id: string };
};

beforeAll(async () => {
  stack = await startTestStack();
  ws = await stack.workspace({ credits: 100_000, rateLimitPerMinute: 100_000, maxActiveJobs: 1_000 });
  other = await stack.workspace({ credits: 1_000 });
  const cancelled: string[] = [];
  for (let i = 0; i < 12; i++) {
    const job = await post('/v1/jobs', { platform: 'instagram', operation: 'profile', target: `paging_${i}` });
    if (i % 3 === 0) cancelled.push(job.id);
  }
  for (let i = 0; i < 5; i++) await post('/v1/jobs', { platform: 'twitter', operation: 'followers', target: `paging_f${i}`, limit: 5 });
  for (let i = 0; i < 3; i++) await post('/v1/jobs', { platform: 'twitter', operation: 'profile', target: `paging_t${i}` });
  batchId = (await post('/v1/batches', { platform: 'twitter', operation: 'profile', targets: ['paging_b0', 'paging_b1', 'paging_b2'] })).id;
  const schedule = await post('/v1/schedules', {
    name: 'paging',
    platform: 'instagram',
    operation: 'profile',
    targets: ['paging_s0', 'paging_s1'],
    frequency: 'daily',
    timezone: 'UTC',
    starts_at: new Date(Date.now() + 86_400_000).toISOString(),
  });
  scheduleId = schedule.id;
  await post(`/v1/schedules/${scheduleId}/run`, undefined);
  for (const id of cancelled) await post(`/v1/jobs/${id}/cancel`, undefined);
  await post('/v1/jobs', { platform: 'instagram', operation: 'profile', target: 'paging_other' }, other);
  // The rest complete.
  stack.startWorker();
  await eventually(async () => {
    const active = await stack.runtime.db.selectFrom('jobs').select('id').where('status', 'in', ['queued', 'running']).execute();
    return active.length === 0;
  }, 60_000);
  all = await stack.runtime.db
    .selectFrom('jobs')
    .select(['id', 'status', 'platform', 'operation', 'batch_id', 'schedule_id'])
    .where('workspace_id', '=', ws.workspaceId)
    .orderBy('id', 'desc')
    .execute();
}, 90_000);
afterAll(async () => {
  await stack.close();
});

/** The `rel="next"` target of a Link header, or null. */
function nextOf(link: string | undefined): string | null {
  if (!link) return null;
  const match = /^<([^>]+)>; rel="next"$/.exec(link);
  if (!match) throw new Error(`not a next link: ${link}`);
  return match[1];
}

/** Follows `Link` from `first` to the last page; the IDs of every page, and the pages' URLs. */
async function walk(first: string): Promise<{ pages: string[][]; urls: string[] }> {
  const pages: string[][] = [];
  const urls: string[] = [];
  for (let url: string | null = first; url !== null;) {
    urls.push(url);
    const res = await stack.api.get(url, { headers: ws.auth });
    expect(res.status).toBe(200);
    pages.push((res.body as Array<{ id: string }>).map((item) => item.id));
    url = nextOf(res.headers.link);
    if (pages.length > 100) throw new Error('paging does not end');
  }
  return { pages, urls };
}

describe('GET /v1/jobs', () => {
  it('pages through every job, newest first, down to the oldest', async () => {
    expect(all.length).toBe(25);
    const { pages, urls } = await walk('/v1/jobs?limit=7&include_result=false');
    expect(pages.map((p) => p.length)).toEqual([7, 7, 7, 4]);
    expect(pages.flat()).toEqual(all.map((j) => j.id));
    // Each next page keeps the query and starts after the last ID of the one before.
    expect(urls[1]).toBe(`/v1/jobs?limit=7&include_result=false&starting_after=${pages[0][6]}`);
    expect(urls[2]).toBe(`/v1/jobs?limit=7&include_result=false&starting_after=${pages[1][6]}`);
  });

  it('answers no Link when the page holds the last job, even a full page', async () => {
    const res = await stack.api.get('/v1/jobs', { headers: ws.auth, query: { limit: 25, include_result: false } });
    expect(res.body).toHaveLength(25);
    expect(res.headers.link).toBeUndefined();
    const after = await stack.api.get('/v1/jobs', { headers: ws.auth, query: { starting_after: all[all.length - 1].id } });
    expect(after.status).toBe(200);
    expect(after.body).toEqual([]);
    expect(after.headers.link).toBeUndefined();
  });

  const filters: Array<[string, Record<string, string>, (j: (typeof all)[number]) => boolean]> = [
    ['status', { status: 'cancelled' }, (j) => j.status === 'cancelled'],
    ['platform', { platform: 'twitter' }, (j) => j.platform === 'twitter'],
    ['operation', { operation: 'profile' }, (j) => j.operation === 'profile'],
    ['platform and operation', { platform: 'twitter', operation: 'profile' }, (j) => j.platform === 'twitter' && j.operation === 'profile'],
    ['batch_id', { batch_id: '<batch>' }, (j) => j.batch_id === batchId],
    ['schedule_id', { schedule_id: '<schedule>' }, (j) => j.schedule_id === scheduleId],
    [
      'status, platform and operation',
      { status: 'completed', platform: 'instagram', operation: 'profile' },
      (j) => j.status === 'completed' && j.platform === 'instagram',
    ],
  ];
  it.each(filters)('filters by %s, page by page', async (_name, query, expected) => {
    const params = new URLSearchParams({ limit: '2', include_result: 'false' });
    for (const [key, value] of Object.entries(query)) params.set(key, value.replace('<batch>', batchId).replace('<schedule>', scheduleId));
    const want = all.filter(expected).map((j) => j.id);
    expect(want.length).toBeGreaterThan(1);
    const { pages } = await walk(`/v1/jobs?${params.toString()}`);
    expect(pages.flat()).toEqual(want);
  });

  it('matches nothing for a platform, batch or schedule it does not know, or of another workspace', async () => {
    const otherBatch = await post('/v1/batches', { platform: 'instagram', operation: 'profile', targets: ['paging_ob'] }, other);
    const queries: Array<Record<string, string>> = [
      { platform: 'myspace' },
      { batch_id: otherBatch.id },
      { schedule_id: 'sch_unknown' },
      { operation: 'nothing' },
    ];
    for (const query of queries) {
      const res = await stack.api.get('/v1/jobs', { headers: ws.auth, query });
      expect(res.status).toBe(200);
      expect(res.body).toEqual([]);
    }
    const bad = await stack.api.get('/v1/jobs', { headers: ws.auth, query: { status: 'finished' } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]).toMatchObject({ loc: ['query', 'status'], type: 'enum' });
  });

  it('leaves result null with include_result=false, and streams it by default', async () => {
    const followers = all.find((j) => j.operation === 'followers' && j.status === 'completed')!;
    const query = { operation: 'followers', limit: 1, starting_after: all[all.indexOf(followers) - 1].id };
    const without = await stack.api.get('/v1/jobs', { headers: ws.auth, query: { ...query, include_result: false } });
    expect(without.body).toHaveLength(1);
    expect(without.body[0]).toMatchObject({ id: followers.id, status: 'completed', result_count: 5, result: null, result_expired: false });
    const withResult = await stack.api.get('/v1/jobs', { headers: ws.auth, query });
    expect(withResult.body[0]).toMatchObject({ id: followers.id, result_count: 5 });
    expect(withResult.body[0].result).toHaveLength(5);
    const { result: _with, ...fieldsWith } = withResult.body[0];
    const { result: _without, ...fieldsWithout } = without.body[0];
    expect(fieldsWithout).toEqual(fieldsWith);
  });

  it('answers 422 for a starting_after that names no job of the workspace', async () => {
    const foreign = (
      await stack.runtime.db.selectFrom('jobs').select('id').where('workspace_id', '=', other.workspaceId).executeTakeFirstOrThrow()
    ).id;
    for (const id of ['job_01jzzzzzzzzzzzzzzzzzzzzzzz', foreign, batchId]) {
      const res = await stack.api.get('/v1/jobs', { headers: ws.auth, query: { starting_after: id } });
      expect(res.status).toBe(422);
      expect(res.body.detail).toEqual([
        { loc: ['query', 'starting_after'], msg: `No job ${id} in this workspace to start after`, type: 'value_error', input: id },
      ]);
    }
  });
});

describe('GET /v1/batches and GET /v1/schedules', () => {
  it('pages through batches with Link', async () => {
    const more = [
      await post('/v1/batches', { platform: 'instagram', operation: 'profile', targets: ['paging_x'] }),
      await post('/v1/batches', { platform: 'instagram', operation: 'profile', targets: ['paging_y'] }),
    ];
    const batches = await stack.runtime.db
      .selectFrom('batches')
      .select('id')
      .where('workspace_id', '=', ws.workspaceId)
      .orderBy('id', 'desc')
      .execute();
    expect(batches.slice(0, 2).map((b) => b.id)).toEqual([more[1].id, more[0].id]);
    expect(batches).toHaveLength(4); // with the batch of the schedule's run
    const { pages, urls } = await walk('/v1/batches?limit=2&include_jobs=true');
    expect(pages).toEqual([batches.slice(0, 2).map((b) => b.id), batches.slice(2).map((b) => b.id)]);
    expect(urls[1]).toBe(`/v1/batches?limit=2&include_jobs=true&starting_after=${more[0].id}`);
    const unknown = await stack.api.get('/v1/batches', { headers: ws.auth, query: { starting_after: all[0].id } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail[0]).toMatchObject({ loc: ['query', 'starting_after'], type: 'value_error' });
  });

  it('pages through schedules with Link, and continues after one deleted since the last page', async () => {
    const body = (name: string) => ({
      name,
      platform: 'instagram',
      operation: 'profile',
      targets: ['nasa'],
      frequency: 'daily',
      timezone: 'UTC',
      starts_at: new Date(Date.now() + 86_400_000).toISOString(),
    });
    const second = await post('/v1/schedules', body('second'));
    const third = await post('/v1/schedules', body('third'));
    const first = await stack.api.get('/v1/schedules', { headers: ws.auth, query: { limit: 1 } });
    expect(first.body.map((s: { id: string }) => s.id)).toEqual([third.id]);
    const next = nextOf(first.headers.link)!;
    expect(next).toBe(`/v1/schedules?limit=1&starting_after=${third.id}`);
    expect((await stack.api.delete(`/v1/schedules/${third.id}`, { headers: ws.auth })).status).toBe(204);
    const { pages } = await walk(next);
    expect(pages.flat()).toEqual([second.id, scheduleId]);
    const foreign = await stack.api.get('/v1/schedules', { headers: other.auth, query: { starting_after: second.id } });
    expect(foreign.status).toBe(422);
  });
});
