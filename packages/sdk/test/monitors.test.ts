import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApiError, type Client, type MonitorRequest } from '@sdx/sdk';
import {
  type SeededWorkspace,
  type ServedStack,
  startServedStack,
  type TestStack,
  untilMonitorRunEnds,
  untilNextSecond,
} from '@sdx/testing';
import { clientFor } from './support';

/**
 * `client.monitors` against the real service: every operation typed from openapi.yaml (each
 * answer checked against it by the client's fetch), two runs of drifting profiles read back as
 * series, an export and a feed of changes, and another workspace's monitor not found.
 */
let stack: TestStack;
let served: ServedStack;
beforeAll(async () => {
  served = await startServedStack({ withWorker: true });
  stack = served.stack;
});
afterAll(async () => {
  await served.close();
});

let ws: SeededWorkspace;
let sdx: Client;
beforeEach(async () => {
  ws = await stack.workspace({ credits: 5_000 });
  sdx = clientFor(served.url, ws);
});

const TARGETS = ['sdk_sandbox_drift_100', 'sdk2_sandbox_drift_300'];
const recipe = {
  name: 'Rivals',
  platform: 'instagram',
  operation: 'profile',
  targets: TARGETS,
  frequency: 'daily',
  time_of_day: '09:30',
  timezone: 'Europe/Paris',
} satisfies MonitorRequest;

it('creates, lists, gets, updates, pauses, resumes and deletes a monitor', async () => {
  const created = await sdx.monitors.create(recipe);
  expect(created).toMatchObject({
    name: 'Rivals',
    status: 'active',
    targets: TARGETS,
    time_of_day: '09:30',
    estimated_credits_per_run: 2,
    estimated_credits_per_month: 60,
  });
  expect((await sdx.monitors.list()).data.map((m) => m.id)).toEqual([created.id]);
  expect((await sdx.monitors.get(created.id)).id).toBe(created.id);
  const updated = await sdx.monitors.update(created.id, { name: 'Renamed', frequency: 'weekly', day_of_week: 'friday' });
  expect(updated).toMatchObject({ name: 'Renamed', frequency: 'weekly', day_of_week: 'friday', estimated_credits_per_month: 8 });
  const paused = await sdx.monitors.pause(created.id);
  expect(paused).toMatchObject({ status: 'paused', paused_reason: 'user', next_run_at: null });
  expect((await sdx.monitors.resume(created.id)).status).toBe('active');

  await expect(sdx.monitors.create({ ...recipe, operation: 'followers' })).rejects.toMatchObject({
    status: 422,
    code: 'operation_not_monitorable',
  });
  // Another workspace's monitor does not exist for this one.
  const other = clientFor(served.url, await stack.workspace({ credits: 10 }));
  await expect(other.monitors.get(created.id)).rejects.toMatchObject({ status: 404, code: 'monitor_not_found' });
  await expect(other.monitors.run(created.id)).rejects.toBeInstanceOf(ApiError);

  await sdx.monitors.delete(created.id);
  await expect(sdx.monitors.get(created.id)).rejects.toMatchObject({ status: 404, code: 'monitor_not_found' });
});

let ranId = '';
let secondRun = '';
let ranSdx: Client;

it('runs a monitor twice and reads its runs, series and export', async () => {
  const monitor = await sdx.monitors.create(recipe);
  ranId = monitor.id;
  ranSdx = sdx;
  const first = await sdx.monitors.run(monitor.id);
  expect(first).toMatchObject({ monitor_id: monitor.id, trigger: 'manual' });
  expect(await untilMonitorRunEnds(stack, first.id)).toBe('completed');
  await untilNextSecond();
  const second = await sdx.monitors.run(monitor.id);
  expect(await untilMonitorRunEnds(stack, second.id)).toBe('completed');

  const runs = await sdx.monitors.runs(monitor.id).toArray();
  expect(runs.map((r) => r.id)).toEqual([second.id, first.id]);
  expect(runs.every((r) => r.status === 'completed' && r.batch_ids.length === 1)).toBe(true);
  // Paged one at a time, the same runs.
  expect((await sdx.monitors.runs(monitor.id, { limit: 1 }).toArray()).map((r) => r.id)).toEqual([second.id, first.id]);

  const followers = await sdx.monitors.series(monitor.id, { metric: 'followers_count' });
  expect(followers.map((s) => s.target).sort()).toEqual([...TARGETS].sort());
  for (const s of followers) {
    expect(s).toMatchObject({ item_id: null, metric: 'followers_count' });
    // Drifting: both runs kept a point, growing.
    expect(s.points).toHaveLength(2);
    expect(s.points[1].value).toBeGreaterThan(s.points[0].value);
  }
  const one = await sdx.monitors.series(monitor.id, { target: TARGETS[0] });
  expect(new Set(one.map((s) => s.target))).toEqual(new Set([TARGETS[0]]));
  expect(one.map((s) => s.metric).sort()).toEqual(['followers_count', 'following_count', 'posts_count']);

  const dir = mkdtempSync(path.join(tmpdir(), 'sdx-series-'));
  const file = path.join(dir, 'series.csv');
  const saved = await sdx.monitors.exportSeries(monitor.id, file, { format: 'csv', metric: 'followers_count' });
  expect(saved.bytes).toBeGreaterThan(0);
  const lines = readFileSync(file, 'utf8').trim().split(/\r?\n/);
  expect(lines[0].replace(/"/g, '')).toBe('target,item_id,metric,at,value');
  expect(lines).toHaveLength(1 + 4);

  secondRun = second.id;
}, 120_000);

it('reads the changes of the second run, paged and filtered', async () => {
  expect(ranId).toMatch(/^mon_/);
  const sdx = ranSdx;
  const monitor = { id: ranId };
  const changes = await sdx.monitors.changes(monitor.id).toArray();
  const followerChanges = changes.filter((c) => c.kind === 'metric_changed' && c.field === 'followers_count');
  expect(followerChanges.map((c) => c.target).sort()).toEqual([...TARGETS].sort());
  expect(followerChanges.every((c) => c.run_id === secondRun && typeof c.change_pct === 'number')).toBe(true);
  const paged = await sdx.monitors.changes(monitor.id, { limit: 1 }).toArray();
  expect(paged.map((c) => c.id)).toEqual(changes.map((c) => c.id));
  const ofOne = await sdx.monitors.changes(monitor.id, { target: TARGETS[1], kind: 'metric_changed' }).toArray();
  expect(ofOne.length).toBeGreaterThan(0);
  expect(ofOne.every((c) => c.target === TARGETS[1] && c.kind === 'metric_changed')).toBe(true);
});
