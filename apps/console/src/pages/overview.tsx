import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
import { useWorkspaceNavigate } from '../paths';
import { WorkspaceLink } from '../components/workspace-link';
import type { Role } from '../api/client';
import { api, currentWorkspaceId, unwrap } from '../api/client';
import { listJobs } from '../api/jobs';
import { UsageChart } from '../components/usage-chart';
import { CopyButton, ErrorNotice, formatDate, formatNumber, Loading, PageHeader } from '../components/ui';
import { DataTable } from '../components/table';
import { LowCreditsWarning } from '../components/credits';
import { atLeast } from '../roles';
import { useWorkspace } from '../session';
import { jobColumns } from './jobs';

export default function Overview() {
  const { workspace, role } = useWorkspace();
  const ws = currentWorkspaceId();
  const usage = useQuery({ queryKey: [ws, 'usage'], queryFn: () => unwrap(api.GET('/v1/usage/current')), refetchInterval: 10_000 });
  const daily = useQuery({
    queryKey: [ws, 'usage-daily'],
    queryFn: () => unwrap(api.GET('/v1/usage/daily', { params: { query: { days: 30 } } })),
  });
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
              monthly plan of {formatNumber(u.credit_limit)}, with {formatNumber(u.purchased_credits)} purchased and{' '}
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
        {active.data && (
          <DataTable
            caption="Active jobs"
            data={active.data}
            columns={jobColumns}
            empty="No job is queued or running."
            testId="active-jobs"
          />
        )}
      </section>
    </div>
  );
}

/** The one-click sandbox example of the getting-started checklist. */
export const EXAMPLE_JOB = { platform: 'instagram', operation: 'profile', target: 'natgeo' } as const;
const DISMISSED = 'sdx.console.checklist-dismissed.';
/** The steps a browser saw done that the API cannot tell (the reference opened, a client's install copied). */
const SEEN = 'sdx.console.checklist-seen.';

/**
 * How to install the clients until they are published on a registry: from tarballs packed in a
 * clone of the service (docs/sdk.md, "Publishing"). `npx sdx` would fetch whatever is published
 * as `sdx` on npm, which is not this CLI: never suggested.
 */
export const INSTALL_COMMANDS = [
  {
    label: 'Pack the clients, in your clone of the service',
    command: '(cd packages/sdk && npm pack --pack-destination /tmp) && (cd apps/cli && npm pack --pack-destination /tmp)',
  },
  {
    label: 'The command line, then sign in with an API key',
    command: 'npm install -g /tmp/sdx-sdk-1.0.0.tgz /tmp/sdx-cli-1.0.0.tgz && sdx login',
  },
  { label: 'The TypeScript SDK, in your project', command: 'npm install /tmp/sdx-sdk-1.0.0.tgz' },
  { label: 'The Python SDK, from the clone', command: 'pip install ./clients/python' },
] as const;

type Seen = { reference?: boolean; client?: boolean };

function Step({ done, children, testId }: { done: boolean; children: ReactNode; testId: string }) {
  return (
    <li className={done ? 'step step-done' : 'step'} data-testid={testId} data-done={done ? 'true' : 'false'}>
      <span className="step-mark" aria-hidden="true">
        {done ? '✓' : '○'}
      </span>{' '}
      <span className="visually-hidden">{done ? 'Done: ' : 'To do: '}</span>
      {children}
    </li>
  );
}

/**
 * A short checklist for a new workspace: make a key, run a first job, read the API reference,
 * install a client. Each step is ticked once done (a key and a job as the API says; the reference
 * and the install as this browser saw them), and the checklist stays until dismissed. Write
 * actions only for the roles that may use them.
 */
function GettingStarted({ role }: { role: Role }) {
  const ws = currentWorkspaceId();
  const navigate = useWorkspaceNavigate();
  const queryClient = useQueryClient();
  const [dismissed, setDismissed] = useState(() => localStorage.getItem(DISMISSED + ws) === '1');
  const [seen, setSeen] = useState<Seen>(() => {
    try {
      return JSON.parse(localStorage.getItem(SEEN + ws) ?? '{}') as Seen;
    } catch {
      return {};
    }
  });
  const see = (step: keyof Seen) => {
    const next = { ...seen, [step]: true };
    localStorage.setItem(SEEN + ws, JSON.stringify(next));
    setSeen(next);
  };
  const anyJob = useQuery({
    queryKey: [ws, 'jobs', 'any'],
    queryFn: () => listJobs({ limit: 1, include_result: false }),
    enabled: !dismissed,
  });
  const keys = useQuery({ queryKey: [ws, 'keys', 'checklist'], queryFn: () => unwrap(api.GET('/v1/keys')), enabled: !dismissed });
  const example = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/jobs', { body: { ...EXAMPLE_JOB } })),
    // The credits, the usage and the lists change with the job: nothing of the overview is kept.
    onSuccess: async (job) => {
      await queryClient.invalidateQueries({ queryKey: [ws] });
      navigate(`/jobs/${job.id}`);
    },
  });
  if (dismissed || !anyJob.data || !keys.data) return null;
  const done = {
    key: keys.data.some((key) => !key.revoked_at),
    job: anyJob.data.items.length > 0,
    reference: seen.reference === true,
    client: seen.client === true,
  };
  const left = Object.values(done).filter((d) => !d).length;
  const dismiss = () => {
    localStorage.setItem(DISMISSED + ws, '1');
    setDismissed(true);
  };
  return (
    <section className="card" aria-labelledby="start-title" data-testid="getting-started">
      <h2 id="start-title">Getting started</h2>
      <p className="muted small" data-testid="getting-started-left">
        {left === 0 ? 'All done. Dismiss this list when you no longer need it.' : `${left} of 4 steps left.`}
      </p>
      <ol className="checklist">
        <Step done={done.key} testId="step-key">
          {atLeast(role, 'admin') ? (
            <WorkspaceLink to="/keys">Make an API key</WorkspaceLink>
          ) : (
            <WorkspaceLink to="/keys">See the API keys</WorkspaceLink>
          )}{' '}
          for your programs to call the API with.
        </Step>
        <Step done={done.job} testId="step-job">
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
        </Step>
        <Step done={done.reference} testId="step-reference">
          See the{' '}
          <a href="/docs" onClick={() => see('reference')}>
            API reference
          </a>{' '}
          (its Clients section covers the CLI, the SDKs and MCP).
        </Step>
        <Step done={done.client} testId="step-client">
          Install a client. Until the packages are published on a registry, install them from your clone of the service:
          <ul className="install-commands">
            {INSTALL_COMMANDS.map(({ label, command }) => (
              <li key={command}>
                <span className="small">{label}</span>
                <span className="copy-line">
                  <code>{command}</code>
                  <span onClickCapture={() => see('client')}>
                    <CopyButton text={command} />
                  </span>
                </span>
              </li>
            ))}
          </ul>
        </Step>
      </ol>
      <button type="button" className="link" onClick={dismiss}>
        Dismiss
      </button>
    </section>
  );
}
