import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import type { Schemas } from '../api/client';

type Day = Schemas['DailyUsage'];

/**
 * Credits used per UTC day (uPlot, a canvas chart of 40 KB). The canvas is drawn for sighted
 * users; the same figures are in the table beside it for everyone else.
 */
export function UsageChart({ days }: { days: Day[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const showLatest = (u: uPlot) => {
      if (u.legend.idx == null && days.length > 0) u.setLegend({ idx: days.length - 1 }, false);
    };
    const x = days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000);
    const width = () => Math.max(280, el.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: 220,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        legend: { show: true },
        // With nothing hovered the legend shows the latest day rather than "--".
        hooks: {
          ready: [(u) => showLatest(u)],
          setLegend: [(u) => showLatest(u)],
        },
        cursor: { drag: { x: false, y: false } },
        scales: {
          x: { time: true, range: (_u, min, max) => [min - 43_200, max + 43_200] },
          y: { range: (_u, _min, max) => [0, Math.max(10, max * 1.1)] },
        },
        axes: [{ stroke: '#444' }, { stroke: '#444', size: 56 }],
        series: [
          // The day as the table beside it writes it (2026-12-07), not a time of day.
          { label: 'Day (UTC)', value: (_u, v) => (v == null ? '—' : new Date(v * 1000).toISOString().slice(0, 10)) },
          {
            label: 'Credits used',
            stroke: '#1d4ed8',
            fill: 'rgba(29,78,216,0.35)',
            width: 1,
            points: { show: false },
            paths: uPlot.paths.bars!({ size: [0.7, 40] }),
          },
          { label: 'Credits released', stroke: '#15803d', width: 2, points: { show: false } },
        ],
      },
      [x, days.map((d) => d.credits_used), days.map((d) => d.credits_released)],
      el,
    );
    const observer = new ResizeObserver(() => plot.setSize({ width: width(), height: 220 }));
    observer.observe(el);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [days]);
  const total = days.reduce((sum, d) => sum + d.credits_used, 0);
  return (
    <div
      ref={box}
      className="chart"
      role="img"
      aria-label={`Credits used per day over the last ${days.length} days: ${total.toLocaleString()} in all.`}
    />
  );
}
