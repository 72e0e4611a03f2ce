import { dispatchMonitors } from '@sdx/domain/testing';
import {
  eventually,
  schemaProblems,
  type SeededWorkspace,
  startTestStack,
  startWebhookReceiver,
  type TestStack,
  untilNextSecond,
  type WebhookReceiver,
} from '@sdx/testing';

/**
 * A monitor's changes and alerts through HTTP (extensions-3.md section 3): metric_changed,
 * field_changed and new_item recorded by a completed run (none on the first), GET
 * /v1/monitors/{id}/changes, and the webhook events monitor.alert and monitor.run.completed.
 */
let stack: TestStack;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
  stack = await startTestStack({
    withWorker: true,
    workerConcurrency: 4,
    env: { WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1', WEBHOOK_RETRY_SCHEDULE: '' },
  });
});
afterAll(async () => {
  await stack.close();
  await receiver.close();
});

interface Run {
  id: string;
  status: string;
  observations: number;
  changes: number;
}

interface Change {
  id: string;
  run_id: string;
  target: string;
  item_id: string | null;
  kind: string;
  field: string | null;
  before: unknown;
  after: unknown;
  change_pct: number | null;
  at: string;
}

interface Event {
  id: string;
  type: string;
  workspace_id: string;
  data: Record<string, unknown>;
}

async function workspace(): Promise<SeededWorkspace> {
  return stack.workspace({ rateLimitPerMinute: 100_000 });
}

async function create(ws: SeededWorkspace, body: Record<string, unknown>): Promise<{ id: string }> {
  const res = await stack.api.post('/v1/monitors', { headers: ws.auth, body: { operation: 'profile', frequency: 'daily', ...body } });
  expect(res.status).toBe(201);
  return res.body as { id: string };
}

/** Runs the monitor now, in a later second than its last run (so drifting values moved), and waits for the run to complete. */
async function runOnce(ws: SeededWorkspace, monitorId: string, pause = true): Promise<Run> {
  if (pause) await untilNextSecond();
  const started = await stack.api.post(`/v1/monitors/${monitorId}/run`, { headers: ws.auth });
  expect(started.status).toBe(202);
  const runId = (started.body as Run).id;
  let run: Run | undefined;
  await eventually(async () => {
    await dispatchMonitors(stack.runtime.services);
    const res = await stack.api.get(`/v1/monitors/${monitorId}/runs`, { headers: ws.auth });
    run = (res.body.data as Run[]).find((r) => r.id === runId);
    return run?.status === 'completed';
  }, 30_000);
  return run!;
}

async function changes(ws: SeededWorkspace, monitorId: string, query = ''): Promise<{ data: Change[]; has_more: boolean }> {
  const res = await stack.api.get(`/v1/monitors/${monitorId}/changes${query}`, { headers: ws.auth });
  expect(res.status).toBe(200);
  return res.body as { data: Change[]; has_more: boolean };
}

async function hook(ws: SeededWorkspace, events: string[]): Promise<void> {
  const res = await stack.api.post('/v1/webhooks', { headers: ws.auth, body: { url: receiver.url, events } });
  expect(res.status).toBe(201);
}

const eventsOf = (ws: SeededWorkspace): Event[] =>
  receiver.messages.map((m) => JSON.parse(m.body) as Event).filter((e) => e.workspace_id === ws.workspaceId);

describe('changes', () => {
  it('another workspace reads no changes; an unknown kind is a 422', async () => {
    const ws = await workspace();
    const monitor = await create(ws, { targets: ['nasa'] });
    const other = await workspace();
    expect((await stack.api.get(`/v1/monitors/${monitor.id}/changes`, { headers: other.auth })).status).toBe(404);
    expect((await stack.api.get('/v1/monitors/mon_01missing/changes', { headers: ws.auth })).status).toBe(404);
    expect((await stack.api.get(`/v1/monitors/${monitor.id}/changes?kind=everything`, { headers: ws.auth })).status).toBe(422);
    expect(await changes(ws, monitor.id)).toEqual({ data: [], has_more: false });
  });

  it('the first run records none; a later run records metric_changed for the drifting target only, and field_changed', async () => {
    const ws = await workspace();
    const drifting = 'nasa_sandbox_drift_40';
    const monitor = await create(ws, { targets: [drifting, 'esa'] });
    const first = await runOnce(ws, monitor.id, false);
    expect(first.observations).toBe(6);
    expect(first.changes).toBe(0);
    expect((await changes(ws, monitor.id)).data).toEqual([]);

    // The bio last seen is made to differ, as a profile's edit between runs would.
    await stack.runtime.services.db
      .updateTable('monitor_fields')
      .set({ value: JSON.stringify('an older bio') })
      .where('monitor_id', '=', monitor.id)
      .where('target', '=', 'esa')
      .where('field', '=', 'bio')
      .execute();
    const second = await runOnce(ws, monitor.id);
    expect(second.observations).toBe(3);
    const all = (await changes(ws, monitor.id)).data;
    expect(second.changes).toBe(all.length);
    const metrics = all.filter((c) => c.kind === 'metric_changed');
    expect(metrics.map((c) => c.field).sort()).toEqual(['followers_count', 'following_count', 'posts_count']);
    for (const c of metrics) {
      expect(c.target).toBe(drifting);
      expect(c.item_id).toBeNull();
      expect(c.run_id).toBe(second.id);
      expect(typeof c.before).toBe('number');
      expect((c.after as number) - (c.before as number)).toBeGreaterThanOrEqual(40);
      expect(c.change_pct).toBeCloseTo((((c.after as number) - (c.before as number)) / (c.before as number)) * 100, 10);
    }
    const fields = all.filter((c) => c.kind === 'field_changed');
    expect(fields).toHaveLength(1);
    expect(fields[0]).toMatchObject({ target: 'esa', item_id: null, field: 'bio', before: 'an older bio', change_pct: null });
    expect(typeof fields[0].after).toBe('string');
    expect(fields[0].after).not.toBe('an older bio');
    // The steady target's counts did not change.
    expect((await changes(ws, monitor.id, '?target=ESA&kind=metric_changed')).data).toEqual([]);
    expect((await changes(ws, monitor.id, '?kind=field_changed')).data).toEqual(fields);

    // Paging: newest first, one at a time, then the rest after it.
    const page = await changes(ws, monitor.id, '?limit=1');
    expect(page.has_more).toBe(true);
    expect(page.data).toEqual([all[0]]);
    const rest = await changes(ws, monitor.id, `?starting_after=${page.data[0].id}`);
    expect(rest).toEqual({ data: all.slice(1), has_more: false });
    expect([...all.map((c) => c.id)].sort().reverse()).toEqual(all.map((c) => c.id));

    // A third run: the fields stay as last seen, so no second field_changed.
    const third = await runOnce(ws, monitor.id);
    expect((await changes(ws, monitor.id, '?kind=field_changed')).data).toHaveLength(1);
    expect((await changes(ws, monitor.id)).data.filter((c) => c.run_id === third.id).map((c) => c.kind)).toEqual([
      'metric_changed',
      'metric_changed',
      'metric_changed',
    ]);
  });

  it('a rolling feed records new_item for items no earlier run listed', async () => {
    const ws = await workspace();
    const target = 'natgeo_sandbox_rolling_5';
    const monitor = await create(ws, { operation: 'posts', targets: [target], limit: 3 });
    const first = await runOnce(ws, monitor.id, false);
    expect(first.changes).toBe(0);
    const second = await runOnce(ws, monitor.id);
    const fresh = (await changes(ws, monitor.id, '?kind=new_item')).data;
    expect(fresh.length).toBeGreaterThan(0);
    expect(fresh.length).toBeLessThanOrEqual(3);
    for (const c of fresh)
      expect(c).toMatchObject({ run_id: second.id, target, kind: 'new_item', field: null, before: null, after: null, change_pct: null });
    expect(new Set(fresh.map((c) => c.item_id)).size).toBe(fresh.length);
    // The items of the first run are not new.
    const firstItems = await stack.runtime.services.db
      .selectFrom('monitor_points')
      .select('item_id')
      .where('run_id', '=', first.id)
      .execute();
    for (const c of fresh) expect(firstItems.map((p) => p.item_id)).not.toContain(c.item_id);
  });
});

describe('alerts', () => {
  it('an above alert fires once when crossed, not again while above; monitor.run.completed follows every run', async () => {
    const ws = await workspace();
    await hook(ws, ['monitor.alert', 'monitor.run.completed']);
    const target = 'nasa_sandbox_drift_30';
    const monitor = await create(ws, { targets: [target], alerts: [{ metric: 'followers_count', condition: 'above', threshold: 1 }] });
    const first = await runOnce(ws, monitor.id, false);
    const [{ value: start }] = await stack.runtime.services.db
      .selectFrom('monitor_series')
      .select('value')
      .where('monitor_id', '=', monitor.id)
      .where('metric', '=', 'followers_count')
      .execute();
    // A threshold between the first value and the next: the next run crosses it.
    const threshold = start + 0.5;
    expect(
      (
        await stack.api.patch(`/v1/monitors/${monitor.id}`, {
          headers: ws.auth,
          body: { alerts: [{ metric: 'followers_count', condition: 'above', threshold }] },
        })
      ).status,
    ).toBe(200);
    const second = await runOnce(ws, monitor.id);
    const third = await runOnce(ws, monitor.id);

    await eventually(() => eventsOf(ws).filter((e) => e.type === 'monitor.run.completed').length >= 3, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const events = eventsOf(ws);
    const completed = events.filter((e) => e.type === 'monitor.run.completed');
    expect(completed.map((e) => e.data.id).sort()).toEqual([first.id, second.id, third.id].sort());
    for (const e of completed) {
      expect(schemaProblems('MonitorRunWebhookEvent', e)).toEqual([]);
      expect(e.data).toMatchObject({ monitor_id: monitor.id, status: 'completed' });
    }
    const alerts = events.filter((e) => e.type === 'monitor.alert');
    expect(alerts).toHaveLength(1);
    expect(schemaProblems('MonitorAlertWebhookEvent', alerts[0])).toEqual([]);
    const data = alerts[0].data;
    expect(data).toMatchObject({
      monitor_id: monitor.id,
      run_id: second.id,
      target,
      item_id: null,
      metric: 'followers_count',
      previous: start,
      condition: 'above',
      threshold,
    });
    expect(data.value as number).toBeGreaterThan(threshold);
  });

  it('a below alert on the steady side and a new_item alert: the one never fires, the other fires per new item', async () => {
    const ws = await workspace();
    await hook(ws, ['*']);
    const target = 'natgeo_sandbox_rolling_5_sandbox_drift_2';
    const monitor = await create(ws, {
      operation: 'posts',
      targets: [target],
      limit: 3,
      alerts: [
        { metric: 'likes', condition: 'new_item' },
        { metric: 'likes', condition: 'below', threshold: 0 },
      ],
    });
    await runOnce(ws, monitor.id, false);
    const second = await runOnce(ws, monitor.id);
    const fresh = (await changes(ws, monitor.id, '?kind=new_item')).data;
    expect(fresh.length).toBeGreaterThan(0);
    await eventually(() => eventsOf(ws).filter((e) => e.type === 'monitor.run.completed').length >= 2, 20_000);
    await eventually(() => eventsOf(ws).filter((e) => e.type === 'monitor.alert').length >= fresh.length, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const alerts = eventsOf(ws).filter((e) => e.type === 'monitor.alert');
    expect(alerts.map((e) => e.data.item_id).sort()).toEqual(fresh.map((c) => c.item_id).sort());
    for (const e of alerts) {
      expect(e.data).toMatchObject({
        monitor_id: monitor.id,
        run_id: second.id,
        target,
        metric: 'likes',
        previous: null,
        condition: 'new_item',
        threshold: null,
      });
      expect(schemaProblems('MonitorAlertWebhookEvent', e)).toEqual([]);
    }
  });
});
