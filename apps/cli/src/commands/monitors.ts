import type { Command } from 'commander';
import type { Monitor, MonitorAlert, MonitorChange, MonitorRequest, MonitorSeries } from '@sdx/sdk';
import { action, collect, integer, oneOf } from '../args';
import { readTargets } from '../context';
import { UsageError } from '../exit-codes';
import { number, type Output } from '../output';

const FREQUENCIES = ['hourly', 'daily', 'weekly'] as const;
const DAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
const METRICS = ['followers_count', 'following_count', 'posts_count', 'views', 'likes', 'comments', 'shares'] as const;
const KINDS = ['metric_changed', 'field_changed', 'new_item'] as const;
const BARS = '▁▂▃▄▅▆▇█';

/**
 * A sparkline of values, one bar per value (the last `width` of them), scaled from the lowest to
 * the highest; a flat series is a row of the lowest bar.
 */
export function sparkline(values: number[], width = 40): string {
  const shown = values.slice(-width);
  if (shown.length === 0) return '';
  const min = Math.min(...shown);
  const max = Math.max(...shown);
  return shown.map((v) => BARS[max === min ? 0 : Math.round(((v - min) / (max - min)) * (BARS.length - 1))]).join('');
}

/**
 * `--alert metric:condition[:threshold][@target]`, e.g. `followers_count:change_pct_above:10`,
 * `followers_count:above:1000000@natgeo`, `views:new_item`.
 */
export function parseAlert(text: string): MonitorAlert {
  const [spec, target] = text.split('@', 2) as [string, string | undefined];
  const [metric, condition, threshold] = spec.split(':');
  const conditions = ['above', 'below', 'change_pct_above', 'new_item'];
  if (!metric || !condition || !conditions.includes(condition))
    throw new UsageError(`--alert ${text}: expected metric:condition[:threshold][@target], condition one of ${conditions.join(', ')}`);
  if (condition !== 'new_item' && (threshold === undefined || !Number.isFinite(Number(threshold)) || threshold.trim() === '')) {
    throw new UsageError(`--alert ${text}: ${condition} needs a number threshold (metric:${condition}:N)`);
  }
  return {
    metric,
    condition: condition as MonitorAlert['condition'],
    ...(condition !== 'new_item' ? { threshold: Number(threshold) } : {}),
    ...(target ? { target } : {}),
  };
}

function seriesName(s: MonitorSeries): string {
  return s.item_id ? `${s.target}/${s.item_id}` : s.target;
}

export function registerMonitors(program: Command): void {
  const monitors = program.command('monitors').description('targets followed over time: series, changes and alerts');

  monitors
    .command('create')
    .description('follow a monitorable operation (profiles, a target’s own posts or videos) over targets on a recurrence')
    .argument('<platform>')
    .argument('<operation>')
    .option('-n, --name <name>', 'a name for it')
    .option('-t, --target <target>', 'a target (repeat for several)', collect)
    .option('--targets-file <file>', 'targets, one per line or a JSON array')
    .requiredOption('--frequency <frequency>', 'hourly, daily or weekly', oneOf(FREQUENCIES))
    .option('--time <HH:MM>', 'when a daily or weekly monitor runs (an hourly one takes its minutes)')
    .option('--day <day>', 'the day of a weekly monitor', oneOf(DAYS))
    .option('--timezone <zone>', 'IANA time zone (default UTC)')
    .option('-l, --limit <n>', 'items per target of a list operation', integer())
    .option('--alert <spec>', 'metric:condition[:threshold][@target] (repeat for several)', collect)
    .action(
      action(
        async (
          ctx,
          platform: string,
          operation: string,
          options: {
            name?: string;
            target?: string[];
            targetsFile?: string;
            frequency: MonitorRequest['frequency'];
            time?: string;
            day?: (typeof DAYS)[number];
            timezone?: string;
            limit?: number;
            alert?: string[];
          },
        ) => {
          const targets = [...(options.target ?? []), ...(options.targetsFile ? readTargets(options.targetsFile) : [])];
          if (targets.length === 0) throw new UsageError('give at least one --target or a --targets-file');
          const body: MonitorRequest = {
            platform,
            operation: operation as MonitorRequest['operation'],
            targets,
            frequency: options.frequency,
            ...(options.name ? { name: options.name } : {}),
            ...(options.time ? { time_of_day: options.time } : {}),
            ...(options.day ? { day_of_week: options.day } : {}),
            ...(options.timezone ? { timezone: options.timezone } : {}),
            ...(options.limit !== undefined ? { limit: options.limit } : {}),
            ...(options.alert ? { alerts: options.alert.map(parseAlert) } : {}),
          };
          printMonitor(ctx.out, await ctx.client().monitors.create(body));
        },
      ),
    );

  monitors
    .command('list')
    .description('monitors, newest first')
    .option('-l, --limit <n>', 'monitors per page (1 to 100)', integer())
    .option('-a, --all', 'every page, not just the first')
    .action(
      action(async (ctx, options: { limit?: number; all?: boolean }) => {
        const list = ctx.client().monitors.list({ limit: options.limit });
        const rows = options.all ? await list.toArray() : (await list).data;
        ctx.out.result(
          rows,
          () =>
            ctx.out.table(rows, [
              { header: 'ID', value: (m) => m.id },
              { header: 'NAME', value: (m) => m.name },
              { header: 'STATUS', value: (m) => m.status, color: (t) => ctx.out.status(t) },
              { header: 'PLATFORM', value: (m) => m.platform },
              { header: 'OPERATION', value: (m) => m.operation },
              { header: 'TARGETS', value: (m) => number(m.targets.length), align: 'right' },
              { header: 'FREQUENCY', value: (m) => m.frequency },
              { header: 'CREDITS/MONTH', value: (m) => number(m.estimated_credits_per_month), align: 'right' },
              { header: 'NEXT RUN (UTC)', value: (m) => m.next_run_at ?? '-' },
            ]),
          rows.map((m) => m.id),
        );
      }),
    );

  monitors
    .command('get')
    .argument('<monitor_id>')
    .description('show a monitor')
    .action(action(async (ctx, id: string) => printMonitor(ctx.out, await ctx.client().monitors.get(id))));

  for (const [verb, description] of [
    ['pause', 'stop automatic runs (series kept)'],
    ['resume', 'start automatic runs again'],
  ] as const) {
    monitors
      .command(verb)
      .argument('<monitor_id>')
      .description(description)
      .action(action(async (ctx, id: string) => printMonitor(ctx.out, await ctx.client().monitors[verb](id))));
  }

  monitors
    .command('run')
    .argument('<monitor_id>')
    .description('run it now (its batches enter the queue as the active-job cap leaves room)')
    .action(
      action(async (ctx, id: string) => {
        const run = await ctx.client().monitors.run(id);
        ctx.out.result(
          run,
          () =>
            ctx.out.record([
              ['run', run.id],
              ['status', ctx.out.status(run.status)],
              ['batches', run.batch_ids.join(', ') || '-'],
            ]),
          [run.id],
        );
      }),
    );

  monitors
    .command('runs')
    .argument('<monitor_id>')
    .description('its runs, newest first')
    .option('-l, --limit <n>', 'runs per page (1 to 100)', integer())
    .option('-a, --all', 'every page, not just the first')
    .action(
      action(async (ctx, id: string, options: { limit?: number; all?: boolean }) => {
        const list = ctx.client().monitors.runs(id, { limit: options.limit });
        const rows = options.all ? await list.toArray() : (await list).data;
        ctx.out.result(
          rows,
          () =>
            ctx.out.table(rows, [
              { header: 'RUN', value: (r) => r.id },
              { header: 'TRIGGER', value: (r) => r.trigger },
              { header: 'STATUS', value: (r) => r.status, color: (t) => ctx.out.status(t) },
              { header: 'STARTED', value: (r) => r.started_at ?? '-' },
              { header: 'FINISHED', value: (r) => r.finished_at ?? '-' },
              { header: 'BATCHES', value: (r) => number(r.batch_ids.length), align: 'right' },
              { header: 'OBSERVATIONS', value: (r) => number(r.observations), align: 'right' },
              { header: 'CHANGES', value: (r) => number(r.changes), align: 'right' },
            ]),
          rows.map((r) => r.id),
        );
      }),
    );

  monitors
    .command('series')
    .argument('<monitor_id>')
    .description('its series: each with its latest value and a sparkline (or the points with --json; a file with --export)')
    .option('--target <target>', 'only this target')
    .option('--metric <metric>', METRICS.join(', '), oneOf(METRICS))
    .option('--item <item_id>', 'only this item (list operations)')
    .option('--from <time>', 'points at or after (ISO 8601)')
    .option('--to <time>', 'points at or before (ISO 8601)')
    .option('--export <file>', 'write the points to a file instead (csv, xlsx or json by --format)')
    .option(
      '--format <format>',
      'csv, xlsx or json (with --export; default from the file name, else csv)',
      oneOf(['csv', 'xlsx', 'json'] as const),
    )
    .action(
      action(
        async (
          ctx,
          id: string,
          options: {
            target?: string;
            metric?: (typeof METRICS)[number];
            item?: string;
            from?: string;
            to?: string;
            export?: string;
            format?: 'csv' | 'xlsx' | 'json';
          },
        ) => {
          const filters = {
            ...(options.target ? { target: options.target } : {}),
            ...(options.metric ? { metric: options.metric } : {}),
            ...(options.item ? { item_id: options.item } : {}),
            ...(options.from ? { from: options.from } : {}),
            ...(options.to ? { to: options.to } : {}),
          };
          if (options.export) {
            const extension = /\.(csv|xlsx|json)$/i.exec(options.export)?.[1]?.toLowerCase() as 'csv' | 'xlsx' | 'json' | undefined;
            const format = options.format ?? extension ?? 'csv';
            const saved = await ctx.client().monitors.exportSeries(id, options.export, { format, ...filters });
            ctx.out.result(
              { file: options.export, format, bytes: saved.bytes },
              () => ctx.out.note(`wrote ${number(saved.bytes)} bytes of ${format} to ${options.export}`),
              [options.export],
            );
            return;
          }
          const series = await ctx.client().monitors.series(id, filters);
          ctx.out.result(series, () =>
            ctx.out.table(series, [
              { header: 'SERIES', value: (s) => seriesName(s) },
              { header: 'METRIC', value: (s) => s.metric },
              { header: 'POINTS', value: (s) => number(s.points.length), align: 'right' },
              { header: 'FIRST', value: (s) => number(s.points[0]?.value), align: 'right' },
              { header: 'LATEST', value: (s) => number(s.points.at(-1)?.value), align: 'right' },
              { header: 'TREND', value: (s) => sparkline(s.points.map((p) => p.value)) },
            ]),
          );
        },
      ),
    );

  monitors
    .command('changes')
    .argument('<monitor_id>')
    .description('what changed, newest first')
    .option('--target <target>', 'only this target')
    .option('--kind <kind>', KINDS.join(', '), oneOf(KINDS))
    .option('-l, --limit <n>', 'changes per page (1 to 100)', integer())
    .option('-a, --all', 'every page, not just the first')
    .action(
      action(async (ctx, id: string, options: { target?: string; kind?: (typeof KINDS)[number]; limit?: number; all?: boolean }) => {
        const list = ctx.client().monitors.changes(id, { target: options.target, kind: options.kind, limit: options.limit });
        const rows = options.all ? await list.toArray() : (await list).data;
        ctx.out.result(
          rows,
          () =>
            ctx.out.table(rows, [
              { header: 'AT', value: (c) => c.at },
              { header: 'TARGET', value: (c) => c.target },
              { header: 'ITEM', value: (c) => c.item_id ?? '-' },
              { header: 'KIND', value: (c) => c.kind },
              { header: 'FIELD', value: (c) => c.field ?? '-' },
              { header: 'CHANGE', value: (c) => describeChange(c) },
            ]),
          rows.map((c) => c.id),
        );
      }),
    );

  monitors
    .command('delete')
    .argument('<monitor_id>')
    .description('delete a monitor (its batches stay)')
    .action(
      action(async (ctx, id: string) => {
        await ctx.client().monitors.delete(id);
        ctx.out.result({ id, deleted: true }, () => ctx.out.note(`deleted ${id}`), [id]);
      }),
    );
}

function describeChange(c: MonitorChange): string {
  if (c.kind === 'new_item') return 'new';
  const show = (v: unknown) =>
    typeof v === 'number' ? number(v) : v === null || v === undefined ? '-' : typeof v === 'string' ? v : JSON.stringify(v);
  const pct = typeof c.change_pct === 'number' ? ` (${c.change_pct > 0 ? '+' : ''}${c.change_pct.toFixed(2)}%)` : '';
  return `${show(c.before)} -> ${show(c.after)}${pct}`;
}

function printMonitor(out: Output, m: Monitor): void {
  out.result(
    m,
    () =>
      out.record([
        ['id', m.id],
        ['name', m.name],
        ['status', m.paused_reason ? `${out.status(m.status)} (${m.paused_reason})` : out.status(m.status)],
        ['platform', m.platform],
        ['operation', m.operation],
        ['targets', m.targets.join(', ')],
        ['limit', m.limit],
        [
          'frequency',
          `${m.frequency}${m.day_of_week ? ` on ${m.day_of_week}` : ''}${m.time_of_day ? ` at ${m.time_of_day}` : ''} (${m.timezone})`,
        ],
        [
          'alerts',
          m.alerts.length
            ? m.alerts
                .map(
                  (a) => `${a.metric}:${a.condition}${a.threshold !== undefined ? `:${a.threshold}` : ''}${a.target ? `@${a.target}` : ''}`,
                )
                .join(', ')
            : '-',
        ],
        ['credits per run', m.estimated_credits_per_run],
        ['credits per month', m.estimated_credits_per_month],
        ['next run (UTC)', m.next_run_at],
        ['last run', m.last_run_at],
      ]),
    [m.id],
  );
}
