import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, currentWorkspaceId, unwrap } from '../api/client';
import { listJobs } from '../api/jobs';
import { UsageChart } from '../components/usage-chart';
import { ErrorNotice, formatDate, formatNumber, Loading, PageHeader } from '../components/ui';
import { DataTable } from '../components/table';
import { atLeast } from '../roles';
import { useWorkspace } from '../session';
import { jobColumns } from './jobs';

export default function Overview() {
  const { workspace, role } = useWorkspace();
  const ws = currentWorkspaceId();
  const usage = useQuery({ queryKey: [ws, 'usage'], queryFn: () => unwrap(api.GET('/v1/usage/current')), refetchInterval: 10_000 });
  const daily = useQuery({ queryKey: [ws, 'usage-daily'], queryFn: () => unwrap(api.GET('/v1/usage/daily', { params: { query: { days: 30 } } })) });
  const active = useQuery({
    queryKey: [ws, 'jobs', 'active'],
    queryFn: async () => {
      const [running, queued] = await Promise.all([
        listJobs({ status: 'running', limit: 25, include_result: false }),
        listJobs({ status: 'queued', limit: 25, include_result: false }),
      ]);
      return [...running.items, ...queued.items];
    },
    refetchInterval: 3_000,
  });
  const u = usage.data;
  return (
    <div>
      <PageHeader title="Overview">
        {atLeast(role, 'member') && (
          <>
            <Link className="button primary" to="/jobs/new">
              New job
            </Link>
            <Link className="button" to="/batches/new">
              New batch
            </Link>
          </>
        )}
      </PageHeader>
      <p className="muted">
        Workspace <strong>{workspace.name}</strong> · your role: {role}
      </p>
      <ErrorNotice error={usage.error} />
      {u ? (
        <section className="cards" aria-label="Credits">
          <div className="card">
            <h2>Credits left</h2>
            <p className="figure" data-testid="credits-left">
              {formatNumber(u.credits_remaining + u.purchased_credits + u.promotional_credits)}
            </p>
            <p className="muted small">
              {formatNumber(u.credits_remaining)} of the monthly {formatNumber(u.credit_limit)} · {formatNumber(u.purchased_credits)} purchased ·{' '}
              {formatNumber(u.promotional_credits)} promotional
              {u.promotional_expires_at ? ` (until ${formatDate(u.promotional_expires_at)})` : ''}
            </p>
          </div>
          <div className="card">
            <h2>Used this period</h2>
            <p className="figure">{formatNumber(u.credits_used)}</p>
            <p className="muted small">since {u.period_start}</p>
          </div>
          <div className="card">
            <h2>Held by running work</h2>
            <p className="figure">{formatNumber(u.credits_reserved)}</p>
            <p className="muted small">released or settled when it ends</p>
          </div>
        </section>
      ) : (
        !usage.error && <Loading />
      )}
      <section aria-labelledby="usage-title">
        <h2 id="usage-title">Usage, last 30 days</h2>
        <ErrorNotice error={daily.error} />
        {daily.data && (
          <>
            <UsageChart days={daily.data} />
            <details>
              <summary>The figures as a table</summary>
              <DataTable
                caption="Usage per day"
                data={[...daily.data].reverse()}
                columns={[
                  { header: 'Day (UTC)', accessorKey: 'date' },
                  { header: 'Credits used', accessorKey: 'credits_used' },
                  { header: 'Credits released', accessorKey: 'credits_released' },
                  { header: 'Results', accessorKey: 'results' },
                  { header: 'Jobs completed', accessorKey: 'jobs_completed' },
                  { header: 'Jobs failed', accessorKey: 'jobs_failed' },
                ]}
              />
            </details>
          </>
        )}
      </section>
      <section aria-labelledby="active-title">
        <h2 id="active-title">Active jobs</h2>
        <ErrorNotice error={active.error} />
        {active.data && <DataTable caption="Active jobs" data={active.data} columns={jobColumns} empty="No job is queued or running." testId="active-jobs" />}
      </section>
    </div>
  );
}
