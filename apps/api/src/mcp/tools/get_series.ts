import { readSeries } from '@sdx/domain/api';
import { jsonBytes } from '../bound';
import { componentSchema, toolInput } from '../contract-schema';
import { defineTool, ID_ARGUMENT } from '../tool';
import { getMonitorSeries as getMonitorSeriesRoute } from '../../routes/getMonitorSeries';

/** A monitor's ID as the tools take it: the contract's `monitor_id` parameter, bounded. */
export const MONITOR_ID_ARGUMENT = { ...ID_ARGUMENT, description: 'The monitor ID create_monitor answered, e.g. "mon_01H...".' };

/** GET /v1/monitors/{monitor_id}/series, within the output budget. */
export const getSeries = defineTool<
  { monitor_id: string; target?: string; metric?: string; item_id?: string; from?: string; to?: string },
  unknown
>({
  name: 'get_series',
  description:
    "A monitor's series: per target (and item, for lists) and metric, its points {at, value} oldest first; a series gains a point only when its value changes. Free. " +
    'Narrow it with target, metric, item_id, from and to (ISO 8601). When the answer would exceed the output size bound, each series keeps its newest points ' +
    'and truncated is true: ask again with a later from, or one target or metric.',
  route: getMonitorSeriesRoute,
  input: toolInput(getMonitorSeriesRoute, {
    fields: ['monitor_id', 'target', 'metric', 'item_id', 'from', 'to'],
    narrow: { monitor_id: MONITOR_ID_ARGUMENT, target: { minLength: 1 }, item_id: { minLength: 1 } },
  }),
  output: {
    type: 'object',
    properties: {
      series: { type: 'array', items: componentSchema('MonitorSeries') },
      truncated: { type: 'boolean', description: 'True when older points were left out to stay within the output size bound.' },
    },
    required: ['series', 'truncated'],
  },
  annotations: { title: "Read a monitor's series", readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(ctx, input) {
    const series = await readSeries(ctx.deps.services.db, ctx.tenant, input.monitor_id, {
      target: input.target,
      metric: input.metric,
      itemId: input.item_id,
      from: input.from === undefined ? undefined : new Date(input.from),
      to: input.to === undefined ? undefined : new Date(input.to),
    });
    let truncated = false;
    // Drop the oldest tenth of the longest series until the answer fits, each series keeping its newest point;
    // then, if one point each is still too much, the series that fit, in order.
    let bytes = jsonBytes({ series, truncated: true });
    while (bytes > ctx.budget && series.some((s) => s.points.length > 1)) {
      truncated = true;
      const longest = series.reduce((a, b) => (b.points.length > a.points.length ? b : a));
      longest.points.splice(0, Math.max(1, Math.floor(longest.points.length / 10)));
      bytes = jsonBytes({ series, truncated: true });
    }
    if (bytes > ctx.budget) {
      truncated = true;
      let used = jsonBytes({ series: [], truncated: true });
      let fit = 0;
      while (fit < series.length && used + jsonBytes(series[fit]) + 1 <= ctx.budget) used += jsonBytes(series[fit++]) + 1;
      series.length = fit;
    }
    const points = series.reduce((n, s) => n + s.points.length, 0);
    return {
      structured: { series, truncated },
      summary: `${series.length} series, ${points} points${truncated ? ' (older points left out to fit the output bound)' : ''}.`,
    };
  },
});
