import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useWorkspaceNavigate } from '../paths';
import { WorkspaceLink } from '../components/workspace-link';
import type { Role } from '../api/client';
import { api, currentWorkspaceId, unwrap } from '../api/client';
import { listJobs } from '../api/jobs';
import { UsageChart } from '../components/usage-chart';
import { ErrorNotice, formatDate, formatNumber, Loading, PageHeader } from '../components/ui';
import { DataTable } from '../components/table';
import { LowCreditsWarning } from '../components/credits';
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
            <WorkspaceLink className="button primary" to="/jobs/new">
              New job
            </WorkspaceLink>
            <WorkspaceLink className="button" to="/batches/new">
              New batch
            </WorkspaceLink>
          </>
        )}
      </PageHeader>
      <p className="muted">
        Workspace <strong>{workspace.name}</strong> · your role: {role}
      </p>
      <LowCreditsWarning role={role} />
      <GettingStarted role={role} />
      <ErrorNotice error={usage.error} />
      {u ? (
        <section className="cards" aria-label="Credits">
          <div className="card">
            <h2>Credits left</h2>
            <p className="figure" data-testid="credits-left">
              {formatNumber(u.credits_remaining)}
            </p>
            {/* credits_remaining counts every source already: the plan's allowance, purchased and promotional credits. */}
            <p className="muted small">
              monthly plan of {formatNumber(u.credit_limit)}, with {formatNumber(u.purchased_credits)} purchased and {formatNumber(u.promotional_credits)} promotional
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

/** The one-click sandbox example of the getting-started checklist. */
export const EXAMPLE_JOB = { platform: 'instagram', operation: 'profile', target: 'natgeo' } as const;
const DISMISSED = 'sdx.console.checklist-dismissed.';

/**
 * A short checklist for a workspace that has run no job yet (until dismissed): make a key, run a
 * first job, read the API reference, install the CLI or SDK. Write actions only for the roles
 * that may use them.
 */
function GettingStarted({ role }: { role: Role }) {
  const ws = currentWorkspaceId();
  const navigate = useWorkspaceNavigate();
  const [dismissed, setDismissed] = useState(() => localStorage.getItem(DISMISSED + ws) === '1');
  const anyJob = useQuery({ queryKey: [ws, 'jobs', 'any'], queryFn: () => listJobs({ limit: 1, include_result: false }), enabled: !dismissed });
  const example = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/jobs', { body: { ...EXAMPLE_JOB } })),
    onSuccess: (job) => navigate(`/jobs/${job.id}`),
  });
  if (dismissed || !anyJob.data || anyJob.data.items.length > 0) return null;
  const dismiss = () => {
    localStorage.setItem(DISMISSED + ws, '1');
    setDismissed(true);
  };
  return (
    <section className="card" aria-labelledby="start-title" data-testid="getting-started">
      <h2 id="start-title">Getting started</h2>
      <ol>
        <li>
          {atLeast(role, 'admin') ? <WorkspaceLink to="/keys">Make an API key</WorkspaceLink> : <WorkspaceLink to="/keys">See the API keys</WorkspaceLink>} for your programs to call the API with.
        </li>
        <li>
          {atLeast(role, 'member') ? (
            <>
              Run a first job:{' '}
              <button type="button" className="button" disabled={example.isPending} onClick={() => example.mutate()}>
                Try an example job
              </button>{' '}
              <span className="muted small">(the Instagram profile of natgeo)</span>
            </>
          ) : (
            <>Run a first job (a member of this workspace can start one).</>
          )}
          <ErrorNotice error={example.error} />
        </li>
        <li>
          See the <a href="/docs">API reference</a>.
        </li>
        <li>
          Install the command line (<code>npx sdx login</code>) or the TypeScript SDK (<code>npm install @sdx/sdk</code>): both are described
          beside the <a href="/docs">API reference</a>.
        </li>
      </ol>
      <button type="button" className="link" onClick={dismiss}>
        Dismiss
      </button>
    </section>
  );
}
