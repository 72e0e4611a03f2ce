import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { ColumnDef } from '@tanstack/react-table';
import { useState } from 'react';
import { useSearchParams } from 'react-router';
import { WorkspaceLink } from '../components/workspace-link';
import { api, currentWorkspaceId, type Job, unwrap } from '../api/client';
import { JOB_STATUSES, listJobs } from '../api/jobs';
import { JobProgress } from '../components/progress';
import { DataTable } from '../components/table';
import { ErrorNotice, formatDate, formatNumber, Loading, PageHeader, Pager, StatusBadge } from '../components/ui';
import { atLeast } from '../roles';
import { useWorkspace } from '../session';

export const jobColumns: ColumnDef<Job, unknown>[] = [
  {
    header: 'Job',
    accessorKey: 'id',
    cell: (c) => (
      <WorkspaceLink to={`/jobs/${c.row.original.id}`}>
        <code>{c.row.original.id}</code>
      </WorkspaceLink>
    ),
  },
  // Status and target first: what a phone shows before the table scrolls sideways.
  { header: 'Status', accessorKey: 'status', cell: (c) => <StatusBadge status={c.row.original.status} /> },
  { header: 'Target', accessorKey: 'target', cell: (c) => <span className="target">{c.row.original.target}</span> },
  { header: 'Platform', accessorKey: 'platform' },
  { header: 'Operation', accessorKey: 'operation' },
  { header: 'Progress', id: 'progress', enableSorting: false, cell: (c) => <JobProgress job={c.row.original} /> },
  { header: 'Credits', accessorKey: 'billed_credits', cell: (c) => formatNumber(c.row.original.billed_credits) },
  { header: 'Created', accessorKey: 'created_at', cell: (c) => formatDate(c.row.original.created_at) },
];

export function usePlatforms() {
  return useQuery({ queryKey: ['platforms'], queryFn: () => unwrap(api.GET('/v1/platforms')), staleTime: 10 * 60_000 });
}

export default function Jobs() {
  const { role } = useWorkspace();
  const [params, setParams] = useSearchParams();
  const [cursors, setCursors] = useState<string[]>([]);
  const platforms = usePlatforms();
  const filters = {
    status: params.get('status') ?? undefined,
    platform: params.get('platform') ?? undefined,
    operation: params.get('operation') ?? undefined,
    batch_id: params.get('batch_id') ?? undefined,
    schedule_id: params.get('schedule_id') ?? undefined,
  };
  const cursor = cursors.at(-1);
  const query = useQuery({
    queryKey: [currentWorkspaceId(), 'jobs', filters, cursor],
    queryFn: () =>
      listJobs({
        ...Object.fromEntries(Object.entries(filters).filter(([, v]) => v)),
        limit: 25,
        include_result: false,
        ...(cursor ? { starting_after: cursor } : {}),
      }),
    placeholderData: keepPreviousData,
    refetchInterval: (q) => (q.state.data?.items.some((j) => j.status === 'queued' || j.status === 'running') ? 2_000 : false),
  });
  const setFilter = (name: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    if (name === 'platform') next.delete('operation');
    setCursors([]);
    setParams(next, { replace: true });
  };
  const operations = platforms.data?.find((p) => p.platform === filters.platform)?.operations ?? [];
  return (
    <div>
      <PageHeader title="Jobs">
        {atLeast(role, 'member') && (
          <WorkspaceLink className="button primary" to="/jobs/new">
            New job
          </WorkspaceLink>
        )}
      </PageHeader>
      <form className="filters" aria-label="Filter jobs" onSubmit={(e) => e.preventDefault()}>
        <label>
          Status
          <select value={filters.status ?? ''} onChange={(e) => setFilter('status', e.target.value)}>
            <option value="">Any</option>
            {JOB_STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          Platform
          <select value={filters.platform ?? ''} onChange={(e) => setFilter('platform', e.target.value)}>
            <option value="">Any</option>
            {platforms.data?.map((p) => (
              <option key={p.platform} value={p.platform}>
                {p.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Operation
          <select value={filters.operation ?? ''} onChange={(e) => setFilter('operation', e.target.value)} disabled={!filters.platform}>
            <option value="">Any</option>
            {operations.map((o) => (
              <option key={o.operation}>{o.operation}</option>
            ))}
          </select>
        </label>
        {(filters.batch_id || filters.schedule_id) && (
          <p className="small">
            Of {filters.batch_id ? `batch ${filters.batch_id}` : `schedule ${filters.schedule_id}`}{' '}
            <button type="button" className="link" onClick={() => setParams(new URLSearchParams(), { replace: true })}>
              show all
            </button>
          </p>
        )}
      </form>
      <ErrorNotice error={query.error} />
      {query.data ? (
        <>
          <DataTable caption="Jobs" data={query.data.items} columns={jobColumns} empty="No job matches." testId="jobs-table" />
          <Pager
            hasPrevious={cursors.length > 0}
            hasNext={Boolean(query.data.next)}
            onPrevious={() => setCursors((c) => c.slice(0, -1))}
            onNext={() => setCursors((c) => [...c, query.data.next!])}
          />
        </>
      ) : (
        !query.error && <Loading />
      )}
    </div>
  );
}
