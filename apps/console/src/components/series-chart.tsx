import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import type { Series } from '../api/monitors';

/** Axis labels that fit: 2.9B, 12.4K. */
const compact = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 2 });
const COLOURS = ['#1d4ed8', '#b91c1c', '#15803d', '#a16207', '#7e22ce', '#0e7490', '#be185d', '#4d7c0f', '#c2410c', '#334155'];
/** More lines than this make a chart nobody can read; the table beside it keeps every series. */
export const MAX_LINES = 20;

export function seriesLabel(s: Series): string {
  return s.item_id ? `${s.target} · ${s.item_id}` : s.target;
}

/**
 * One metric's series as lines (uPlot), one per target or item, over the union of their
 * instants. A series holds its value between points (a point is kept only on a change), so a
 * line steps to the next point rather than dropping to nothing.
 */
export function SeriesChart({ metric, series }: { metric: string; series: Series[] }) {
  const box = useRef<HTMLDivElement>(null);
  const shown = series.slice(0, MAX_LINES);
  useEffect(() => {
    const el = box.current;
    const lines = series.slice(0, MAX_LINES);
    if (!el || lines.length === 0) return;
    const instants = [...new Set(lines.flatMap((s) => s.points.map((p) => Date.parse(p.at))))].sort((a, b) => a - b);
    const columns = lines.map((s) => {
      let i = 0;
      let held: number | null = null;
      return instants.map((t) => {
        while (i < s.points.length && Date.parse(s.points[i].at) <= t) held = s.points[i++].value;
        return held;
      });
    });
    const width = () => Math.max(280, el.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: 220,
        legend: { show: true },
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: true } },
        axes: [{ stroke: '#444' }, { stroke: '#444', size: 64, values: (_u, splits) => splits.map((v) => compact.format(v)) }],
        series: [
          { label: 'Time' },
          ...lines.map((s, i) => ({
            label: seriesLabel(s),
            stroke: COLOURS[i % COLOURS.length],
            width: 2,
            spanGaps: true,
            points: { show: true, size: 5 },
          })),
        ],
      },
      [instants.map((t) => t / 1000), ...columns] as uPlot.AlignedData,
      el,
    );
    const observer = new ResizeObserver(() => plot.setSize({ width: width(), height: 220 }));
    observer.observe(el);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [series]);
  return (
    <div
      ref={box}
      className="chart"
      role="img"
      data-testid={`chart-${metric}`}
      data-lines={shown.length}
      aria-label={`${metric.replace(/_/g, ' ')}: ${shown.length} ${shown.length === 1 ? 'line' : 'lines'}${series.length > shown.length ? ` of ${series.length}` : ''}.`}
    />
  );
}
