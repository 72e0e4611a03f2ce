import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { ColumnDef } from '@tanstack/react-table';
import { useState } from 'react';
import { WorkspaceLink } from '../components/workspace-link';
import { api, currentWorkspaceId, unwrapPage } from '../api/client';
import type { Monitor } from '../api/monitors';
import { DataTable } from '../components/table';
import { ErrorNotice, Loading, PageHeader, Pager, StatusBadge } from '../components/ui';
import { inZone } from '../components/zones';
import { formatNumber, plural } from '../format';
import { atLeast } from '../roles';
import { useWorkspace } from '../session';

const columns: ColumnDef<Monitor, unknown>[] = [
  {
    header: 'Name',
    accessorKey: 'name',
    cell: (c) => <WorkspaceLink to={`/monitors/${c.row.original.id}`}>{c.row.original.name}</WorkspaceLink>,
  },
  {
    header: 'What',
    id: 'what',
    enableSorting: false,
    cell: (c) => `${c.row.original.platform} · ${c.row.original.operation} · ${plural(c.row.original.targets.length, 'target', 'targets')}`,
  },
  { header: 'Runs', accessorKey: 'frequency' },
  { header: 'Status', accessorKey: 'status', cell: (c) => <StatusBadge status={c.row.original.status} /> },
  {
    header: 'Credits a month (at most)',
    accessorKey: 'estimated_credits_per_month',
    cell: (c) => formatNumber(c.row.original.estimated_credits_per_month),
  },
  {
    header: 'Next run',
    accessorKey: 'next_run_at',
    cell: (c) => (c.row.original.next_run_at ? inZone(c.row.original.next_run_at, c.row.original.timezone) : '—'),
  },
];

export default function Monitors() {
  const { role } = useWorkspace();
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const query = useQuery({
    queryKey: [currentWorkspaceId(), 'monitors', cursor],
    queryFn: () => unwrapPage(api.GET('/v1/monitors', { params: { query: { limit: 50, ...(cursor ? { starting_after: cursor } : {}) } } })),
    placeholderData: keepPreviousData,
  });
  return (
    <div>
      <PageHeader title="Monitors">
        {atLeast(role, 'member') && (
          <WorkspaceLink className="button primary" to="/monitors/new">
            New monitor
          </WorkspaceLink>
        )}
      </PageHeader>
      <p className="muted">
        A monitor follows profiles or their posts over time: each run keeps what changed, as series, a feed of changes and alerts.
      </p>
      <ErrorNotice error={query.error} />
      {query.data ? (
        <>
          <DataTable caption="Monitors" testId="monitors-table" data={query.data.items} columns={columns} empty="No monitor yet." />
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
