import { ensureMonthPartition, MAX_SERIES_POINTS, readSeries, type Tenant } from '@sdx/domain/testing';
import { sql } from 'kysely';
import { type SeededWorkspace, startTestStack, type TestStack } from '@sdx/testing';

/**
 * GET /v1/monitors/{id}/series as the route writes it (readSeriesJson: each series' points
 * joined as text, the instants formatted here): the same series as readSeries builds as objects
 * (the exports' reader), whatever the instants' milliseconds, the values' form and the keys'
 * characters; and the bound on the points one answer holds.
 */
let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack.close();
});

async function monitorOf(ws: SeededWorkspace, targets: string[]): Promise<string> {
  const res = await stack.api.post('/v1/monitors', { headers: ws.auth, body: { operation: 'posts', targets, frequency: 'daily' } });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

async function tenantOf(ws: SeededWorkspace): Promise<Tenant> {
  const workspace = await stack.runtime.db.selectFrom('workspaces').selectAll().where('id', '=', ws.workspaceId).executeTakeFirstOrThrow();
  return { workspace, keyId: null, role: null };
}

interface Point {
  target: string;
  itemId: string;
  metric: string;
  at: string;
  value: number;
}

async function insertPoints(ws: SeededWorkspace, monitorId: string, points: Point[]): Promise<void> {
  for (const p of points) await ensureMonthPartition(stack.runtime.db, new Date(p.at));
  await stack.runtime.db
    .insertInto('monitor_points')
    .values(
      points.map((p) => ({
        monitor_id: monitorId,
        workspace_id: ws.workspaceId,
        target: p.target,
        item_id: p.itemId,
        metric: p.metric,
        at: new Date(p.at),
        value: p.value,
        run_id: 'mrn_test',
      })),
    )
    .execute();
}

describe('GET /v1/monitors/{id}/series', () => {
  it('answers what readSeries builds: instants to the millisecond, any finite value, keys with quotes and non-ASCII', async () => {
    const ws = await stack.workspace({ rateLimitPerMinute: 100_000 });
    const odd = 'o"dd\\user_é';
    // Points are written by the service only for the monitor's targets; here a key no target
    // would have is written directly, to see it escaped.
    const monitorId = await monitorOf(ws, ['plain']);
    // Given out of order: the answer is sorted by target, metric, item and instant (the index's order).
    await insertPoints(ws, monitorId, [
      { target: odd, itemId: 'item "1" ✓', metric: 'likes', at: '2026-11-30T23:59:59.999Z', value: 1.5 },
      { target: odd, itemId: 'item "1" ✓', metric: 'likes', at: '2026-11-01T00:00:00.001Z', value: -0.25 },
      { target: 'plain', itemId: '', metric: 'followers_count', at: '2026-12-01T00:00:00.500Z', value: 1e21 },
      { target: 'plain', itemId: '', metric: 'followers_count', at: '2026-10-15T12:00:00.000Z', value: 0 },
      { target: 'plain', itemId: '', metric: 'posts_count', at: '2026-10-15T12:00:00.000Z', value: 123456789012 },
      { target: odd, itemId: 'a', metric: 'views', at: '2026-12-03T01:02:03.040Z', value: 2 ** 53 },
    ]);
    const res = await stack.api.get(`/v1/monitors/${monitorId}/series`, { headers: ws.auth });
    expect(res.status).toBe(200);
    const expected = await readSeries(stack.runtime.db, await tenantOf(ws), monitorId, {});
    expect(res.body).toEqual({ data: expected });
    expect(expected.map((s) => [s.target, s.item_id, s.metric, s.points.map((p) => p.at)])).toEqual([
      [odd, 'item "1" ✓', 'likes', ['2026-11-01T00:00:00.001Z', '2026-11-30T23:59:59.999Z']],
      [odd, 'a', 'views', ['2026-12-03T01:02:03.040Z']],
      ['plain', null, 'followers_count', ['2026-10-15T12:00:00.000Z', '2026-12-01T00:00:00.500Z']],
      ['plain', null, 'posts_count', ['2026-10-15T12:00:00.000Z']],
    ]);
    expect(res.body.data[0].points.map((p: { value: number }) => p.value)).toEqual([-0.25, 1.5]);
    expect(res.body.data[2].points.map((p: { value: number }) => p.value)).toEqual([0, 1e21]);
    // Filters narrow the same answer; a series with no point in the range is not listed.
    const narrowed = await stack.api.get(
      `/v1/monitors/${monitorId}/series?target=PLAIN&from=${encodeURIComponent('2026-11-01T00:00:00Z')}`,
      { headers: ws.auth },
    );
    expect(narrowed.body).toEqual({
      data: [{ target: 'plain', item_id: null, metric: 'followers_count', points: [{ at: '2026-12-01T00:00:00.500Z', value: 1e21 }] }],
    });
    const none = await stack.api.get(`/v1/monitors/${monitorId}/series?metric=shares`, { headers: ws.auth });
    expect(none.body).toEqual({ data: [] });
  });

  it(`answers 422 asking for a narrower answer beyond ${MAX_SERIES_POINTS.toLocaleString('en')} points`, async () => {
    const ws = await stack.workspace({ rateLimitPerMinute: 100_000 });
    const monitorId = await monitorOf(ws, ['busy']);
    const start = new Date('2026-11-01T00:00:00.000Z');
    await ensureMonthPartition(stack.runtime.db, start);
    // One point a second from the start of November: within the month, MAX_SERIES_POINTS + 1 of them.
    await sql`
      insert into monitor_points (monitor_id, workspace_id, target, item_id, metric, at, value, run_id)
      select ${monitorId}, ${ws.workspaceId}, 'busy', 'i', 'likes', ${start.toISOString()}::timestamptz + make_interval(secs => s), s, 'mrn_test'
      from generate_series(0, ${MAX_SERIES_POINTS}::int) s
    `.execute(stack.runtime.db);
    const over = await stack.api.get(`/v1/monitors/${monitorId}/series`, { headers: ws.auth });
    expect(over.status).toBe(422);
    expect(over.body.detail[0].msg).toContain('narrow the answer');
    const to = new Date(start.getTime() + (MAX_SERIES_POINTS - 1) * 1000).toISOString();
    const within = await stack.api.get(`/v1/monitors/${monitorId}/series?to=${encodeURIComponent(to)}`, { headers: ws.auth });
    expect(within.status).toBe(200);
    expect(within.body.data[0].points).toHaveLength(MAX_SERIES_POINTS);
    expect(within.body.data[0].points.at(-1)).toEqual({ at: to, value: MAX_SERIES_POINTS - 1 });
  });
});
