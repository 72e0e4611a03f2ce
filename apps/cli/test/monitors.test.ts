import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  type SeededWorkspace,
  type ServedStack,
  startServedStack,
  type TestStack,
  untilMonitorRunEnds,
  untilNextSecond,
} from '@sdx/testing';
import { sparkline } from '../src/commands/monitors';
import { json, sdx } from './support';

/** `sdx monitors …` as a child process against the real service, with the series' sparklines. */

let stack: TestStack;
let served: ServedStack;
let home: string;
let ws: SeededWorkspace;
let env: Record<string, string>;
beforeAll(async () => {
  served = await startServedStack({ withWorker: true });
  stack = served.stack;
  home = mkdtempSync(path.join(tmpdir(), 'sdx-cli-monitors-'));
  ws = await stack.workspace({ credits: 10_000 });
  env = { SDX_BASE_URL: served.url, SDX_API_KEY: ws.apiKey, XDG_CONFIG_HOME: path.join(home, 'config') };
});
afterAll(async () => {
  await served.close();
  rmSync(home, { recursive: true, force: true });
});

it('draws a sparkline from the lowest to the highest value', () => {
  expect(sparkline([1, 2, 3, 4, 5, 6, 7, 8])).toBe('▁▂▃▄▅▆▇█');
  expect(sparkline([5, 5, 5])).toBe('▁▁▁');
  expect(sparkline([10, 0])).toBe('█▁');
  expect(sparkline([])).toBe('');
  expect(
    sparkline(
      Array.from({ length: 100 }, (_, i) => i),
      10,
    ),
  ).toHaveLength(10);
});

const targets = ['cli_sandbox_drift_100', 'cli2_sandbox_drift_500'];
let id = '';

it('creates a monitor with an alert, runs it twice, and shows its runs, series, sparklines and export', async () => {
  const created = json(
    await sdx(
      [
        'monitors',
        'create',
        'instagram',
        'profile',
        '-n',
        'Rivals',
        '-t',
        targets[0],
        '-t',
        targets[1],
        '--frequency',
        'weekly',
        '--day',
        'friday',
        '--time',
        '08:15',
        '--timezone',
        'Europe/Paris',
        '--alert',
        `followers_count:change_pct_above:0.5@${targets[1]}`,
        '--json',
      ],
      { env },
    ),
  );
  expect(created).toMatchObject({
    name: 'Rivals',
    targets,
    frequency: 'weekly',
    day_of_week: 'friday',
    time_of_day: '08:15',
    timezone: 'Europe/Paris',
    alerts: [{ metric: 'followers_count', condition: 'change_pct_above', threshold: 0.5, target: targets[1] }],
    estimated_credits_per_run: 2,
    estimated_credits_per_month: 8,
  });
  id = created.id as string;

  const badAlert = await sdx(
    ['monitors', 'create', 'instagram', 'profile', '-t', 'x', '--frequency', 'daily', '--alert', 'followers_count:above'],
    { env },
  );
  expect(badAlert.code).toBe(2);
  expect(badAlert.stderr).toContain('needs a number threshold');
  const notMonitorable = await sdx(['monitors', 'create', 'instagram', 'followers', '-t', 'x', '--frequency', 'daily', '--json'], { env });
  expect(notMonitorable.code).toBe(3);
  expect(JSON.parse(notMonitorable.stderr)).toMatchObject({ error: 'operation_not_monitorable', status: 422 });

  expect(json(await sdx(['monitors', 'list', '--json'], { env })).map((m: { id: string }) => m.id)).toEqual([id]);
  expect((await sdx(['monitors', 'list', '-q'], { env })).stdout.trim()).toBe(id);
  const shown = await sdx(['monitors', 'get', id], { env });
  expect(shown.stdout).toMatch(/^credits per month +8$/m);
  expect(json(await sdx(['monitors', 'pause', id, '--json'], { env }))).toMatchObject({ status: 'paused', paused_reason: 'user' });
  expect(json(await sdx(['monitors', 'resume', id, '--json'], { env })).status).toBe('active');

  const first = json(await sdx(['monitors', 'run', id, '--json'], { env }));
  expect(await untilMonitorRunEnds(stack, first.id)).toBe('completed');
  await untilNextSecond();
  const second = (await sdx(['monitors', 'run', id, '-q'], { env })).stdout.trim();
  expect(second).toMatch(/^mrn_/);
  expect(await untilMonitorRunEnds(stack, second)).toBe('completed');

  const runs = json(await sdx(['monitors', 'runs', id, '--json'], { env }));
  expect(runs.map((r: { id: string }) => r.id)).toEqual([second, first.id]);
  const runsTable = await sdx(['monitors', 'runs', id], { env });
  expect(runsTable.stdout.split('\n')[0]).toMatch(/^RUN +TRIGGER +STATUS/);

  const series = json(await sdx(['monitors', 'series', id, '--metric', 'followers_count', '--json'], { env }));
  expect(series).toHaveLength(2);
  for (const s of series) expect(s.points).toHaveLength(2);
  const table = await sdx(['monitors', 'series', id, '--metric', 'followers_count'], { env });
  expect(table.code).toBe(0);
  const rows = table.stdout.trim().split('\n');
  expect(rows[0]).toMatch(/^SERIES +METRIC +POINTS +FIRST +LATEST +TREND$/);
  // Two points, growing: the lowest bar, then the highest.
  for (const target of targets) expect(rows.find((r) => r.startsWith(target))).toMatch(/ ▁█$/);

  const file = path.join(home, 'series.csv');
  const exported = json(await sdx(['monitors', 'series', id, '--export', file, '--json'], { env }));
  expect(exported).toMatchObject({ file, format: 'csv' });
  expect(readFileSync(file, 'utf8').split(/\r?\n/)[0].replace(/"/g, '')).toBe('target,item_id,metric,at,value');
}, 120_000);

it('shows the changes of the second run, then deletes the monitor', async () => {
  expect(id).toMatch(/^mon_/);
  const changes = json(await sdx(['monitors', 'changes', id, '--kind', 'metric_changed', '--all', '--json'], { env }));
  expect(
    changes
      .filter((c: { field: string }) => c.field === 'followers_count')
      .map((c: { target: string }) => c.target)
      .sort(),
  ).toEqual([...targets].sort());
  const feed = await sdx(['monitors', 'changes', id, '--target', targets[1]], { env });
  expect(feed.stdout).toMatch(/followers_count +[\d,]+ -> [\d,]+ \(\+\d+\.\d{2}%\)/);

  expect(json(await sdx(['monitors', 'delete', id, '--json'], { env }))).toEqual({ id, deleted: true });
  const gone = await sdx(['monitors', 'get', id, '--json'], { env });
  expect(gone.code).toBe(3);
  expect(JSON.parse(gone.stderr)).toMatchObject({ error: 'monitor_not_found', status: 404 });
}, 60_000);
