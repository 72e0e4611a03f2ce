import { keepPreviousData, useQuery } from '@tanstack/react-query';
import type { ColumnDef } from '@tanstack/react-table';
import { useState } from 'react';
import { WorkspaceLink } from '../components/workspace-link';
import { api, type Batch, currentWorkspaceId, unwrapPage } from '../api/client';
import { DataTable } from '../components/table';
import { ErrorNotice, formatDate, formatNumber, Loading, PageHeader, Pager, StatusBadge } from '../components/ui';
import { atLeast } from '../roles';
import { useWorkspace } from '../session';

/** Children by state, in words: "3 completed, 1 running". */
export function childStates(b: Batch): string {
  const parts = [
    [b.completed_count, 'completed'],
    [b.running_count, 'running'],
    [b.queued_count, 'queued'],
    [b.failed_count, 'failed'],
    [b.cancelled_count, 'cancelled'],
  ] as const;
  return (
    parts
      .filter(([n]) => n > 0)
      .map(([n, s]) => `${n} ${s}`)
      .join(', ') || 'none'
  );
}

const columns: ColumnDef<Batch, unknown>[] = [
  {
    header: 'Batch',
    accessorKey: 'id',
    cell: (c) => (
      <WorkspaceLink to={`/batches/${c.row.original.id}`}>
        <code>{c.row.original.id}</code>
      </WorkspaceLink>
    ),
  },
  { header: 'Platform', accessorKey: 'platform' },
  { header: 'Operation', accessorKey: 'operation' },
  { header: 'Targets', accessorKey: 'target_count' },
  { header: 'Status', accessorKey: 'status', cell: (c) => <StatusBadge status={c.row.original.status} /> },
  { header: 'Children', id: 'children', enableSorting: false, cell: (c) => childStates(c.row.original) },
  { header: 'Credits', accessorKey: 'billed_credits', cell: (c) => formatNumber(c.row.original.billed_credits) },
  { header: 'Created', accessorKey: 'created_at', cell: (c) => formatDate(c.row.original.created_at) },
];

export default function Batches() {
  const { role } = useWorkspace();
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const query = useQuery({
    queryKey: [currentWorkspaceId(), 'batches', cursor],
    queryFn: () => unwrapPage(api.GET('/v1/batches', { params: { query: { limit: 25, ...(cursor ? { starting_after: cursor } : {}) } } })),
    placeholderData: keepPreviousData,
    refetchInterval: (q) => (q.state.data?.items.some((b) => b.status === 'queued' || b.status === 'running') ? 2_000 : false),
  });
  return (
    <div>
      <PageHeader title="Batches">
        {atLeast(role, 'member') && (
          <WorkspaceLink className="button primary" to="/batches/new">
            New batch
          </WorkspaceLink>
        )}
      </PageHeader>
      <ErrorNotice error={query.error} />
      {query.data ? (
        <>
          <DataTable caption="Batches" data={query.data.items} columns={columns} empty="No batch yet." />
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
