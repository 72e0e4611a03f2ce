import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { ColumnDef } from '@tanstack/react-table';
import { useState } from 'react';
import { WorkspaceLink } from '../components/workspace-link';
import { api, currentWorkspaceId, type Schedule, unwrapPage } from '../api/client';
import { DataTable } from '../components/table';
import { ErrorNotice, Loading, PageHeader, Pager, StatusBadge } from '../components/ui';
import { inZone } from '../components/zones';
import { atLeast } from '../roles';
import { useWorkspace } from '../session';

const columns: ColumnDef<Schedule, unknown>[] = [
  {
    header: 'Name',
    accessorKey: 'name',
    cell: (c) => <WorkspaceLink to={`/schedules/${c.row.original.id}`}>{c.row.original.name}</WorkspaceLink>,
  },
  {
    header: 'What',
    id: 'what',
    enableSorting: false,
    cell: (c) =>
      `${c.row.original.platform} · ${c.row.original.operation} · ${c.row.original.targets.length} target${c.row.original.targets.length === 1 ? '' : 's'}`,
  },
  { header: 'Repeats', accessorKey: 'frequency' },
  { header: 'Status', accessorKey: 'status', cell: (c) => <StatusBadge status={c.row.original.status} /> },
  {
    header: 'Next run',
    accessorKey: 'next_run_at',
    cell: (c) => (c.row.original.next_run_at ? inZone(c.row.original.next_run_at, c.row.original.timezone) : '—'),
  },
];

export default function Schedules() {
  const { role } = useWorkspace();
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const query = useQuery({
    queryKey: [currentWorkspaceId(), 'schedules', cursor],
    queryFn: () =>
      unwrapPage(api.GET('/v1/schedules', { params: { query: { limit: 50, ...(cursor ? { starting_after: cursor } : {}) } } })),
    placeholderData: keepPreviousData,
  });
  return (
    <div>
      <PageHeader title="Schedules">
        {atLeast(role, 'member') && (
          <WorkspaceLink className="button primary" to="/schedules/new">
            New schedule
          </WorkspaceLink>
        )}
      </PageHeader>
      <ErrorNotice error={query.error} />
      {query.data ? (
        <>
          <DataTable caption="Schedules" data={query.data.items} columns={columns} empty="No schedule yet." />
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
