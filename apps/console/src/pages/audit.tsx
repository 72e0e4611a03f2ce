import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, currentWorkspaceId, unwrap } from '../api/client';
import { DataTable } from '../components/table';
import { ErrorNotice, formatDate, Loading, PageHeader, Pager } from '../components/ui';
import { atLeast } from '../roles';
import { useWorkspace } from '../session';

const PAGE = 50;

export default function Audit() {
  const { role } = useWorkspace();
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const events = useQuery({
    queryKey: [currentWorkspaceId(), 'audit', cursor],
    enabled: atLeast(role, 'admin'),
    queryFn: () => unwrap(api.GET('/v1/audit-events', { params: { query: { limit: PAGE, ...(cursor ? { starting_after: cursor } : {}) } } })),
    placeholderData: keepPreviousData,
  });
  if (!atLeast(role, 'admin')) {
    return (
      <div>
        <PageHeader title="Audit events" />
        <p>The audit log is for admins and owners of the workspace.</p>
      </div>
    );
  }
  const rows = events.data ?? [];
  return (
    <div>
      <PageHeader title="Audit events" />
      <p className="muted">Every change to the workspace, newest first: who made it, from where, and what it changed.</p>
      <ErrorNotice error={events.error} />
      {events.data ? (
        <>
          <DataTable
            caption="Audit events"
            testId="audit-table"
            data={rows}
            empty="Nothing recorded yet."
            columns={[
              { header: 'When', accessorKey: 'created_at', cell: (c) => formatDate(c.row.original.created_at) },
              { header: 'Action', accessorKey: 'action', cell: (c) => <code>{c.row.original.action}</code> },
              { header: 'By', id: 'actor', accessorFn: (e) => `${e.actor.type}${e.actor.id ? ` ${e.actor.id}` : ''}` },
              { header: 'On', id: 'target', accessorFn: (e) => [e.target_type, e.target_id].filter(Boolean).join(' ') },
              { header: 'Details', id: 'data', enableSorting: false, accessorFn: (e) => (Object.keys(e.data).length ? JSON.stringify(e.data) : '') },
              { header: 'From', accessorKey: 'ip' },
            ]}
          />
          <Pager hasPrevious={cursors.length > 0} hasNext={rows.length === PAGE} onPrevious={() => setCursors((c) => c.slice(0, -1))} onNext={() => setCursors((c) => [...c, rows.at(-1)!.id])} />
        </>
      ) : (
        !events.error && <Loading />
      )}
    </div>
  );
}
