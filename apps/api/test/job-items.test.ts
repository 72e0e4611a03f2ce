import type { KyselyPlugin } from 'kysely';
import { sql } from 'kysely';
import { readJobItems, type Tenant } from '@sdx/domain/testing';
import { eventually, type SeededWorkspace, startTestStack, type TestStack } from '@sdx/testing';

/**
 * GET /v1/jobs/{job_id}/items (extensions.md 7): a 25,000-follower result paged through whole,
 * with page sizes that fall on and across its stored pages, each call reading from Postgres no
 * more than its own items; and the ndjson exports of a job and of a batch, one item per line.
 */

let stack: TestStack;
let ws: SeededWorkspace;
let bigJobId: string;
let batchId: string;
/** The big job's item IDs as stored, page by page. */
let storedIds: string[];

beforeAll(async () => {
  stack = await startTestStack({ withWorker: true });
  ws = await stack.workspace({ credits: 60_000, rateLimitPerMinute: 100_000 });
  const big = await stack.api.post('/v1/jobs', {
    headers: ws.auth,
    body: { platform: 'twitter', operation: 'followers', target: 'items_big', limit: 25_000 },
  });
  const batch = await stack.api.post('/v1/batches', {
    headers: ws.auth,
    body: { platform: 'twitter', operation: 'followers', targets: ['items_b1', 'items_b2'], limit: 3 },
  });
  bigJobId = big.body.id;
  batchId = batch.body.id;
  await eventually(async () => {
    const rows = await stack.runtime.db
      .selectFrom('jobs')
      .select('status')
      .where((eb) => eb.or([eb('id', '=', bigJobId), eb('batch_id', '=', batchId)]))
      .execute();
    return rows.length === 3 && rows.every((r) => r.status === 'completed');
  }, 60_000);
  const pages = await stack.runtime.db
    .selectFrom('job_result_pages')
    .select('items')
    .where('job_id', '=', bigJobId)
    .orderBy('page_no')
    .execute();
  storedIds = pages.flatMap((p) => (p.items as Array<{ id: string }>).map((i) => i.id));
}, 90_000);
afterAll(async () => {
  await stack.close();
});

async function readAll(limit: number): Promise<{ ids: string[]; calls: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let calls = 0;
  do {
    const res = await stack.api.get(`/v1/jobs/${bigJobId}/items`, { headers: ws.auth, query: { limit, ...(cursor ? { cursor } : {}) } });
    expect(res.status).toBe(200);
    calls += 1;
    const items = res.body.items as Array<{ id: string; kind: string }>;
    cursor = res.body.next_cursor;
    // Full pages until the last one, which ends the result.
    expect(items.length).toBe(cursor === null ? 25_000 - ids.length : limit);
    ids.push(...items.map((i) => i.id));
    if (calls > 30_000) throw new Error('paging does not end');
  } while (cursor !== null);
  return { ids, calls };
}

it('pages through a 25,000-follower result in stored order, on and across its stored pages', async () => {
  expect(storedIds).toHaveLength(25_000);
  expect(new Set(storedIds).size).toBe(25_000);
  const byThousand = await readAll(1000);
  expect(byThousand.calls).toBe(25);
  expect(byThousand.ids).toEqual(storedIds);
  const across = await readAll(999);
  expect(across.calls).toBe(26);
  expect(across.ids).toEqual(storedIds);
});

it('reads from Postgres no more than the items of the page it answers', async () => {
  let fetched = 0;
  const measuring: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: (args) => {
      fetched += JSON.stringify(args.result.rows).length;
      return Promise.resolve(args.result);
    },
  };
  const db = stack.runtime.db.withPlugin(measuring);
  const workspace = await stack.runtime.db.selectFrom('workspaces').selectAll().where('id', '=', ws.workspaceId).executeTakeFirstOrThrow();
  const tenant: Tenant = { workspace, keyId: null, role: 'viewer' };
  let cursor: string | null = null;
  let pages = 0;
  let largest = 0;
  do {
    fetched = 0;
    const page = await readJobItems({ db }, tenant, bigJobId, { limit: 700, cursor });
    // The job row and the page counts are small; the rest is this page's items.
    expect(fetched).toBeLessThan(page.itemsJson.length * 1.2 + 20_000);
    largest = Math.max(largest, fetched);
    cursor = page.nextCursor;
    pages += 1;
  } while (cursor !== null);
  expect(pages).toBe(Math.ceil(25_000 / 700));
  // A whole result is several megabytes; a call never came near it.
  const whole = (
    await sql<{ n: number }>`select sum(length(items::text))::int as n from job_result_pages where job_id = ${bigJobId}`.execute(
      stack.runtime.db,
    )
  ).rows[0].n;
  expect(largest * 20).toBeLessThan(whole);
});

it('reads the counts of no more stored pages than the page spans, and the one its next item is on', async () => {
  let pageRows = 0;
  const counting: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: (args) => {
      const first = args.result.rows[0] as Record<string, unknown> | undefined;
      if (first && 'item_count' in first && 'page_no' in first) pageRows += args.result.rows.length;
      return Promise.resolve(args.result);
    },
  };
  const db = stack.runtime.db.withPlugin(counting);
  const workspace = await stack.runtime.db.selectFrom('workspaces').selectAll().where('id', '=', ws.workspaceId).executeTakeFirstOrThrow();
  const tenant: Tenant = { workspace, keyId: null, role: 'viewer' };
  const counts = (
    await stack.runtime.db
      .selectFrom('job_result_pages')
      .select('item_count')
      .where('job_id', '=', bigJobId)
      .where('item_count', '>', 0)
      .orderBy('page_no')
      .execute()
  ).map((r) => r.item_count);
  // The stored page each item is on.
  const pageOf = counts.flatMap((n, k) => Array.from({ length: n }, () => k));
  expect(pageOf).toHaveLength(25_000);
  for (const limit of [1, 7, 250, 1000]) {
    let cursor: string | null = null;
    let start = 0;
    let reads = 0;
    do {
      pageRows = 0;
      const page = await readJobItems({ db }, tenant, bigJobId, { limit, cursor });
      const end = Math.min(start + limit, 25_000);
      // The pages of items start..end-1, and the page of item `end` when there is one.
      const needed = pageOf[end - 1] - pageOf[start] + 1 + (end < 25_000 && pageOf[end] !== pageOf[end - 1] ? 1 : 0);
      expect(pageRows).toBe(needed);
      cursor = page.nextCursor;
      start = end;
      reads += 1;
    } while (cursor !== null && reads < 40);
  }
});

it('starts again from any cursor it handed out, and refuses one it did not', async () => {
  const first = await stack.api.get(`/v1/jobs/${bigJobId}/items`, { headers: ws.auth, query: { limit: 700 } });
  expect(first.status).toBe(200);
  const cursor = first.body.next_cursor as string;
  const again = await stack.api.get(`/v1/jobs/${bigJobId}/items`, { headers: ws.auth, query: { limit: 3, cursor } });
  expect(again.body.items.map((i: { id: string }) => i.id)).toEqual(storedIds.slice(700, 703));
  // Default page size.
  const defaults = await stack.api.get(`/v1/jobs/${bigJobId}/items`, { headers: ws.auth });
  expect(defaults.body.items).toHaveLength(100);

  const beyond = Buffer.from('999:0').toString('base64url');
  const pastAPage = Buffer.from('0:1000').toString('base64url');
  for (const bad of ['not a cursor', beyond, pastAPage]) {
    const res = await stack.api.get(`/v1/jobs/${bigJobId}/items`, { headers: ws.auth, query: { cursor: bad } });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([expect.objectContaining({ loc: ['query', 'cursor'], type: 'value_error', input: bad })]);
  }
  for (const limit of [0, 1001]) {
    const res = await stack.api.get(`/v1/jobs/${bigJobId}/items`, { headers: ws.auth, query: { limit } });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(['query', 'limit']);
  }
});

it('starts a page at an offset: the last page straight away, any place on or across stored pages, empty past the end', async () => {
  const stored = await stack.runtime.db
    .selectFrom('job_result_pages')
    .select('item_count')
    .where('job_id', '=', bigJobId)
    .orderBy('page_no')
    .execute();
  const firstPage = stored[0].item_count;
  expect(stored.length).toBeGreaterThan(2);
  // The last page of 25,000 items at 300 a page: floor(24,999 / 300) × 300.
  const last = await stack.api.get(`/v1/jobs/${bigJobId}/items`, { headers: ws.auth, query: { limit: 300, offset: 24_900 } });
  expect(last.status).toBe(200);
  expect(last.body).toEqual({ items: expect.any(Array), next_cursor: null });
  expect(last.body.items.map((i: { id: string }) => i.id)).toEqual(storedIds.slice(24_900));
  // On a stored page's first item, inside a page, across the pages' boundary; next_cursor continues as after any page.
  for (const offset of [firstPage, firstPage - 1, 1, 12_345]) {
    const res = await stack.api.get(`/v1/jobs/${bigJobId}/items`, { headers: ws.auth, query: { limit: 7, offset } });
    expect(res.body.items.map((i: { id: string }) => i.id)).toEqual(storedIds.slice(offset, offset + 7));
    const next = await stack.api.get(`/v1/jobs/${bigJobId}/items`, { headers: ws.auth, query: { limit: 5, cursor: res.body.next_cursor } });
    expect(next.body.items.map((i: { id: string }) => i.id)).toEqual(storedIds.slice(offset + 7, offset + 12));
  }
  const zero = await stack.api.get(`/v1/jobs/${bigJobId}/items`, { headers: ws.auth, query: { limit: 4, offset: 0 } });
  expect(zero.body.items.map((i: { id: string }) => i.id)).toEqual(storedIds.slice(0, 4));
  for (const offset of [25_000, 1_000_000]) {
    const past = await stack.api.get(`/v1/jobs/${bigJobId}/items`, { headers: ws.auth, query: { offset } });
    expect(past.body).toEqual({ items: [], next_cursor: null });
  }
  // Not with a cursor, never negative.
  const both = await stack.api.get(`/v1/jobs/${bigJobId}/items`, { headers: ws.auth, query: { offset: 5, cursor: zero.body.next_cursor } });
  expect(both.status).toBe(422);
  expect(both.body.detail).toEqual([expect.objectContaining({ loc: ['query', 'offset'], type: 'value_error' })]);
  const negative = await stack.api.get(`/v1/jobs/${bigJobId}/items`, { headers: ws.auth, query: { offset: -1 } });
  expect(negative.status).toBe(422);
  expect(negative.body.detail[0].loc).toEqual(['query', 'offset']);
});

it('answers 404 for another workspace, 409 before completion, and an empty last page for an empty result', async () => {
  const other = await stack.workspace({ credits: 100 });
  const foreign = await stack.api.get(`/v1/jobs/${bigJobId}/items`, { headers: other.auth });
  expect(foreign.status).toBe(404);
  expect(foreign.body.detail.error).toBe('job_not_found');

  await sql`
    insert into jobs (id, workspace_id, platform, operation, target, normalized_target, request_key, requested_limit, status, max_attempts, credit_rate, results_per_credit, base_credits)
    values ('job_items_running', ${ws.workspaceId}, 'twitter', 'followers', 'x', 'x', 'items_running', 5, 'running', 4, 1, 1, 0),
           ('job_items_empty', ${ws.workspaceId}, 'twitter', 'followers', 'y', 'y', 'items_empty', 5, 'completed', 4, 1, 1, 0)
  `.execute(stack.runtime.db);
  const running = await stack.api.get('/v1/jobs/job_items_running/items', { headers: ws.auth });
  expect(running.status).toBe(409);
  expect(running.body.detail).toMatchObject({ error: 'results_not_ready', job_id: 'job_items_running', status: 'running' });
  const empty = await stack.api.get('/v1/jobs/job_items_empty/items', { headers: ws.auth });
  expect(empty.status).toBe(200);
  expect(empty.body).toEqual({ items: [], next_cursor: null });
});

describe('format=ndjson', () => {
  it('exports a job one item per line, in stored order', async () => {
    const res = await stack.api.get(`/v1/jobs/${bigJobId}/export`, { headers: ws.auth, query: { format: 'ndjson' } });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="${bigJobId}.ndjson"`);
    const text = res.text;
    expect(text.endsWith('\n')).toBe(true);
    const lines = text.slice(0, -1).split('\n');
    expect(lines).toHaveLength(25_000);
    expect(lines.map((line) => (JSON.parse(line) as { id: string }).id)).toEqual(storedIds);
  });

  it('exports a batch as {job_id, target, item} lines, children in target order', async () => {
    const res = await stack.api.get(`/v1/batches/${batchId}/export`, { headers: ws.auth, query: { format: 'ndjson' } });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson');
    const lines = res.text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { job_id: string; target: string; item: { kind: string } });
    const children = await stack.runtime.db
      .selectFrom('jobs')
      .select(['id', 'target'])
      .where('batch_id', '=', batchId)
      .orderBy('batch_position')
      .execute();
    expect(lines.map((l) => [l.job_id, l.target])).toEqual(
      children.flatMap((c) => [
        [c.id, c.target],
        [c.id, c.target],
        [c.id, c.target],
      ]),
    );
    expect(lines.every((l) => Object.keys(l).join() === 'job_id,target,item' && l.item.kind === 'profile')).toBe(true);
  });
});
