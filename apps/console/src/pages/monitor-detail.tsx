import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useParams } from 'react-router';
import { useWorkspaceNavigate } from '../paths';
import { WorkspaceLink } from '../components/workspace-link';
import { api, currentWorkspaceId, unwrap } from '../api/client';
import {
  alertsFiredBy,
  latestWithChange,
  type MonitorAlert,
  type MonitorChange,
  monitorChanges,
  monitorSeries,
  type Series,
} from '../api/monitors';
import { DataTable } from '../components/table';
import { SeriesChart, seriesLabel } from '../components/series-chart';
import { ConfirmButton, ErrorNotice, formatDate, Loading, PageHeader, Pager, StatusBadge } from '../components/ui';
import { inZone } from '../components/zones';
import { formatNumber, plural } from '../format';
import { atLeast } from '../roles';
import { useWorkspace } from '../session';

const CHANGES_PAGE = 25;

function signed(value: number | null): string {
  if (value === null) return '—';
  return value > 0 ? `+${formatNumber(value)}` : formatNumber(value);
}

function describeAlert(alert: MonitorAlert): string {
  const who = alert.target ? ` of ${alert.target}` : ' of any target';
  switch (alert.condition) {
    case 'above':
      return `${alert.metric}${who} rises above ${formatNumber(alert.threshold ?? 0)}`;
    case 'below':
      return `${alert.metric}${who} falls below ${formatNumber(alert.threshold ?? 0)}`;
    case 'change_pct_above':
      return `${alert.metric}${who} changes by at least ${alert.threshold ?? 0} % in a run`;
    default:
      return `a new item${who}`;
  }
}

function describeChange(change: MonitorChange): string {
  if (change.kind === 'new_item') return `New item ${change.item_id ?? ''}`.trim();
  const what = change.item_id ? `${change.field} of ${change.item_id}` : String(change.field);
  const value = (v: unknown) => (typeof v === 'number' ? formatNumber(v) : v === null || v === undefined ? '—' : JSON.stringify(v));
  const pct =
    change.change_pct !== null && change.change_pct !== undefined
      ? ` (${change.change_pct > 0 ? '+' : ''}${change.change_pct.toFixed(2)} %)`
      : '';
  return `${what}: ${value(change.before)} → ${value(change.after)}${pct}`;
}

/** The changes, newest first, a page at a time (cursor paging as the service's lists). */
function ChangesFeed({ monitorId, alerts }: { monitorId: string; alerts: MonitorAlert[] }) {
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const changes = useQuery({
    queryKey: [currentWorkspaceId(), 'monitor-changes', monitorId, cursor],
    queryFn: () => monitorChanges(monitorId, { limit: CHANGES_PAGE, ...(cursor ? { starting_after: cursor } : {}) }),
    placeholderData: keepPreviousData,
    refetchInterval: cursors.length === 0 ? 5_000 : false,
  });
  return (
    <section aria-labelledby="changes-title">
      <h2 id="changes-title">Changes</h2>
      <ErrorNotice error={changes.error} />
      {changes.data ? (
        <>
          <DataTable
            caption="Changes, newest first"
            testId="monitor-changes"
            data={changes.data.items}
            empty="No change yet: the first run records what it sees, and later runs record what changed."
            columns={[
              { header: 'When', accessorKey: 'at', cell: (c) => formatDate(c.row.original.at) },
              { header: 'Target', accessorKey: 'target' },
              { header: 'Kind', accessorKey: 'kind', cell: (c) => c.row.original.kind.replace(/_/g, ' ') },
              { header: 'Change', id: 'change', enableSorting: false, cell: (c) => describeChange(c.row.original) },
              {
                header: 'Alert',
                id: 'alert',
                enableSorting: false,
                cell: (c) => {
                  const fired = alertsFiredBy(c.row.original, alerts);
                  return fired.length ? (
                    <span className="badge badge-warn">{fired.map((a) => a.condition.replace(/_/g, ' ')).join(', ')}</span>
                  ) : (
                    ''
                  );
                },
              },
            ]}
          />
          <Pager
            hasPrevious={cursors.length > 0}
            hasNext={changes.data.hasMore}
            onPrevious={() => setCursors((c) => c.slice(0, -1))}
            onNext={() => setCursors((c) => [...c, changes.data.items.at(-1)!.id])}
          />
        </>
      ) : (
        !changes.error && <Loading />
      )}
    </section>
  );
}

/** A chart per metric (one line per target or item), and each series' latest value with its 1- and 7-day change. */
function SeriesSection({ monitorId }: { monitorId: string }) {
  const series = useQuery({
    queryKey: [currentWorkspaceId(), 'monitor-series', monitorId],
    queryFn: () => monitorSeries(monitorId),
    refetchInterval: 5_000,
  });
  if (series.error) return <ErrorNotice error={series.error} />;
  if (!series.data) return <Loading />;
  const byMetric = new Map<string, Series[]>();
  for (const s of series.data) byMetric.set(s.metric, [...(byMetric.get(s.metric) ?? []), s]);
  const latest = series.data.map((s) => ({ series: s, ...latestWithChange(s) }));
  return (
    <>
      <section aria-labelledby="series-title">
        <h2 id="series-title">Series</h2>
        {byMetric.size === 0 && <p className="muted">No point yet: run the monitor to record its first values.</p>}
        {[...byMetric].map(([metric, lines]) => (
          <figure key={metric} className="stack">
            <figcaption>
              <strong>{metric.replace(/_/g, ' ')}</strong> <span className="muted small">({plural(lines.length, 'line', 'lines')})</span>
            </figcaption>
            <SeriesChart metric={metric} series={lines} />
          </figure>
        ))}
      </section>
      {latest.length > 0 && (
        <section aria-labelledby="latest-title">
          <h2 id="latest-title">Latest values</h2>
          <DataTable
            caption="Latest values with their change over 1 and 7 days"
            testId="monitor-latest"
            data={latest}
            columns={[
              { header: 'Series', id: 'series', enableSorting: false, cell: (c) => seriesLabel(c.row.original.series) },
              { header: 'Metric', id: 'metric', accessorFn: (r) => r.series.metric },
              { header: 'Latest', accessorKey: 'latest', cell: (c) => formatNumber(c.row.original.latest) },
              { header: '1 day', accessorKey: 'day', cell: (c) => signed(c.row.original.day) },
              { header: '7 days', accessorKey: 'week', cell: (c) => signed(c.row.original.week) },
            ]}
          />
        </section>
      )}
    </>
  );
}

export default function MonitorDetail() {
  const { monitorId = '' } = useParams();
  const { role } = useWorkspace();
  const navigate = useWorkspaceNavigate();
  const queryClient = useQueryClient();
  const key = [currentWorkspaceId(), 'monitor', monitorId];
  const path = { params: { path: { monitor_id: monitorId } } };
  const monitor = useQuery({ queryKey: key, queryFn: () => unwrap(api.GET('/v1/monitors/{monitor_id}', path)), refetchInterval: 5_000 });
  const runs = useQuery({
    queryKey: [currentWorkspaceId(), 'monitor-runs', monitorId],
    queryFn: () => unwrap(api.GET('/v1/monitors/{monitor_id}/runs', { params: { path: { monitor_id: monitorId }, query: { limit: 10 } } })),
    refetchInterval: 3_000,
  });
  const refresh = async () => {
    await queryClient.invalidateQueries({ queryKey: [currentWorkspaceId(), 'monitor-runs', monitorId] });
  };
  const act = useMutation({
    mutationFn: async (action: 'pause' | 'resume') =>
      action === 'pause'
        ? unwrap(api.POST('/v1/monitors/{monitor_id}/pause', path))
        : unwrap(api.POST('/v1/monitors/{monitor_id}/resume', path)),
    onSuccess: (updated) => queryClient.setQueryData(key, updated),
  });
  const run = useMutation({ mutationFn: () => unwrap(api.POST('/v1/monitors/{monitor_id}/run', path)), onSuccess: refresh });
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/v1/monitors/{monitor_id}', path)),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: [currentWorkspaceId(), 'monitors'] });
      void navigate('/monitors');
    },
  });
  if (monitor.error) return <ErrorNotice error={monitor.error} />;
  const m = monitor.data;
  if (!m) return <Loading />;
  const canWrite = atLeast(role, 'member');
  return (
    <div>
      <PageHeader title={m.name}>
        {canWrite && (
          <>
            {m.status === 'active' ? (
              <button type="button" onClick={() => act.mutate('pause')} disabled={act.isPending}>
                Pause
              </button>
            ) : (
              <button type="button" onClick={() => act.mutate('resume')} disabled={act.isPending}>
                Resume
              </button>
            )}
            <button type="button" onClick={() => run.mutate()} disabled={run.isPending}>
              Run now
            </button>
            <ConfirmButton
              label="Delete"
              danger
              question={`Delete the monitor "${m.name}"? Its series, changes and runs go with it; its batches are kept.`}
              onConfirm={() => remove.mutate()}
            />
          </>
        )}
      </PageHeader>
      <ErrorNotice error={act.error ?? run.error ?? remove.error} />
      <dl className="facts">
        <dt>Status</dt>
        <dd>
          <StatusBadge status={m.status} />
          {m.paused_reason === 'creator_revoked' && ' (its creator’s key was revoked or they left the workspace)'}
        </dd>
        <dt>What</dt>
        <dd>
          {m.platform} · {m.operation}
          {m.operation !== 'profile' && ` · latest ${plural(m.limit, 'item', 'items')} per target`}
        </dd>
        <dt>Targets</dt>
        <dd className="target">{m.targets.join(', ')}</dd>
        <dt>Runs</dt>
        <dd>
          {m.frequency}
          {m.day_of_week ? ` on ${m.day_of_week}` : ''}
          {m.time_of_day ? ` at ${m.frequency === 'hourly' ? `:${m.time_of_day.slice(3)}` : m.time_of_day}` : ''} ({m.timezone})
        </dd>
        <dt>Next run</dt>
        <dd>{m.next_run_at ? inZone(m.next_run_at, m.timezone) : '—'}</dd>
        <dt>Last run</dt>
        <dd>{formatDate(m.last_run_at)}</dd>
        <dt>Credits</dt>
        <dd data-testid="monitor-credits">
          at most {plural(m.estimated_credits_per_run, 'credit', 'credits')} per run,{' '}
          {plural(m.estimated_credits_per_month, 'credit', 'credits')} per month
        </dd>
      </dl>
      <SeriesSection monitorId={m.id} />
      <ChangesFeed monitorId={m.id} alerts={m.alerts} />
      <section aria-labelledby="alerts-title">
        <h2 id="alerts-title">Alerts</h2>
        {m.alerts.length === 0 ? (
          <p className="muted">No alert.</p>
        ) : (
          <ul data-testid="monitor-alerts">
            {m.alerts.map((a, i) => (
              <li key={i}>{describeAlert(a)}</li>
            ))}
          </ul>
        )}
        <p className="muted small">
          A firing alert is sent to the workspace’s <WorkspaceLink to="/webhooks">webhooks</WorkspaceLink> as <code>monitor.alert</code>;
          the changes that fired one are marked above.
        </p>
      </section>
      <section aria-labelledby="runs-title">
        <h2 id="runs-title">Runs</h2>
        <ErrorNotice error={runs.error} />
        <DataTable
          caption="Runs, newest first"
          testId="monitor-runs"
          data={runs.data?.data ?? []}
          empty="No run yet."
          columns={[
            { header: 'Due', accessorKey: 'scheduled_for', cell: (c) => formatDate(c.row.original.scheduled_for) },
            { header: 'Trigger', accessorKey: 'trigger' },
            { header: 'Status', accessorKey: 'status', cell: (c) => <StatusBadge status={c.row.original.status} /> },
            {
              header: 'Batches',
              id: 'batches',
              enableSorting: false,
              cell: (c) =>
                c.row.original.batch_ids.map((id, i) => (
                  <span key={id}>
                    {i > 0 && ', '}
                    <WorkspaceLink to={`/batches/${id}`}>{id}</WorkspaceLink>
                  </span>
                )),
            },
            { header: 'Observations', accessorKey: 'observations', cell: (c) => formatNumber(c.row.original.observations) },
            { header: 'Changes', accessorKey: 'changes', cell: (c) => formatNumber(c.row.original.changes) },
          ]}
        />
      </section>
    </div>
  );
}
