import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, currentWorkspaceId, type Schemas, unwrap } from '../api/client';
import { DataTable } from '../components/table';
import { ErrorNotice, formatDate, formatNumber, Loading, PageHeader, Pager } from '../components/ui';
import { atLeast } from '../roles';
import { useWorkspace } from '../session';

const PAGE = 50;

/** Who acted, in words: a member by email (and name), else the kind of actor and its ID. */
function actorLabel(actor: Schemas['AuditEvent']['actor'], members: ReadonlyMap<string, Schemas['Member']>): string {
  const member = actor.type === 'user' && actor.id ? members.get(actor.id) : undefined;
  if (member) return member.display_name ? `${member.display_name} (${member.email})` : member.email;
  const kind = actor.type === 'api_key' ? 'API key' : actor.type;
  return actor.id ? `${kind} ${actor.id}` : kind;
}

export default function Audit() {
  const { role, workspace } = useWorkspace();
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const events = useQuery({
    queryKey: [currentWorkspaceId(), 'audit', cursor],
    enabled: atLeast(role, 'admin'),
    queryFn: () =>
      unwrap(api.GET('/v1/audit-events', { params: { query: { limit: PAGE, ...(cursor ? { starting_after: cursor } : {}) } } })),
    placeholderData: keepPreviousData,
  });
  // The members list names the users in "By"; a user no longer a member keeps their ID.
  const members = useQuery({
    queryKey: [currentWorkspaceId(), 'members'],
    enabled: atLeast(role, 'admin'),
    queryFn: () => unwrap(api.GET('/v1/workspaces/{workspace_id}/members', { params: { path: { workspace_id: workspace.id } } })),
  });
  const byId = new Map((members.data ?? []).map((m) => [m.user_id, m]));
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
      {/* The table waits for the members too: its rows keep the labels they were first drawn with. */}
      {events.data && !members.isPending ? (
        <>
          <DataTable
            caption="Audit events"
            testId="audit-table"
            data={rows}
            empty="Nothing recorded yet."
            columns={[
              { header: 'When', accessorKey: 'created_at', cell: (c) => formatDate(c.row.original.created_at) },
              { header: 'Action', accessorKey: 'action', cell: (c) => <code>{c.row.original.action}</code> },
              {
                header: 'By',
                id: 'actor',
                accessorFn: (e) => actorLabel(e.actor, byId),
                cell: (c) => actorLabel(c.row.original.actor, byId),
              },
              { header: 'On', id: 'target', accessorFn: (e) => [e.target_type, e.target_id].filter(Boolean).join(' ') },
              {
                header: 'Details',
                id: 'data',
                enableSorting: false,
                accessorFn: (e) => (Object.keys(e.data).length ? JSON.stringify(e.data) : ''),
                // Each field on a line of its own, wrapped: nothing cut off, no raw JSON to read.
                cell: (c) => <AuditDetails data={c.row.original.data} />,
              },
              { header: 'From', accessorKey: 'ip' },
            ]}
          />
          <Pager
            hasPrevious={cursors.length > 0}
            hasNext={rows.length === PAGE}
            onPrevious={() => setCursors((c) => c.slice(0, -1))}
            onNext={() => setCursors((c) => [...c, rows.at(-1)!.id])}
          />
        </>
      ) : (
        !events.error && <Loading />
      )}
    </div>
  );
}

/** A value of an audit event's data in words: numbers with separators, lists and objects spelled out. */
function detailText(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'number') return formatNumber(value);
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(detailText).join(', ');
  if (typeof value === 'object')
    return Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${k.replace(/_/g, ' ')} ${detailText(v)}`)
      .join(', ');
  if (typeof value === 'boolean') return String(value);
  // JSON has no other kind of value.
  return '';
}

/** An audit event's `data`, one field a line ("credits: 500"), long values wrapped. */
function AuditDetails({ data }: { data: Record<string, unknown> }) {
  const entries = Object.entries(data);
  if (entries.length === 0) return null;
  return (
    <dl className="audit-details" data-testid="audit-details">
      {entries.map(([key, value]) => (
        <div key={key}>
          <dt>{key.replace(/_/g, ' ')}</dt>
          <dd>{detailText(value)}</dd>
        </div>
      ))}
    </dl>
  );
}
