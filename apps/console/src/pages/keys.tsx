import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, currentWorkspaceId, type Role, type Schemas, unwrap } from '../api/client';
import { DataTable } from '../components/table';
import {
  ConfirmButton,
  ErrorNotice,
  Field,
  formatDate,
  Loading,
  PageHeader,
  SecretOnce,
  StatusBadge,
  SubmitButton,
} from '../components/ui';
import { atLeast, ROLES } from '../roles';
import { useWorkspace } from '../session';

/** A key of GET /v1/keys: one made here (`api_key`) or an application's OAuth grant (`oauth`, extensions-2.md 3). */
type ApiKey = Schemas['ApiKey'];

const isOAuth = (k: ApiKey) => k.kind === 'oauth';

/** An OAuth grant as the table names it: a badge, so it stands apart from the keys made here. */
function KindCell({ apiKey }: { apiKey: ApiKey }) {
  return isOAuth(apiKey) ? <span className="badge badge-info">OAuth app</span> : <span>API key</span>;
}

function revokeQuestion(k: ApiKey): string {
  const name = k.name ?? k.prefix;
  return isOAuth(k)
    ? `Revoke the access of the OAuth app "${name}"? Its tokens stop working at their next request, and it must be connected again to come back. This cannot be undone.`
    : `Revoke the key "${name}"? Programs using it fail from their next request. This cannot be undone.`;
}

function keyState(k: ApiKey): string {
  if (k.revoked_at) return 'revoked';
  if (k.expires_at && Date.parse(k.expires_at) < Date.now()) return 'expired';
  return 'active';
}

export default function Keys() {
  const { role } = useWorkspace();
  const queryClient = useQueryClient();
  const key = [currentWorkspaceId(), 'keys'];
  const keys = useQuery({ queryKey: key, queryFn: () => unwrap(api.GET('/v1/keys')) });
  const [name, setName] = useState('');
  const [keyRole, setKeyRole] = useState<Role>('member');
  const [expires, setExpires] = useState('');
  const [created, setCreated] = useState<Schemas['CreatedApiKey'] | null>(null);
  const create = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/v1/keys', {
          body: { name: name.trim(), role: keyRole, ...(expires ? { expires_at: new Date(`${expires}T23:59:59`).toISOString() } : {}) },
        }),
      ),
    onSuccess: (k) => {
      setCreated(k);
      setName('');
      setExpires('');
      void queryClient.invalidateQueries({ queryKey: key });
    },
  });
  const revoke = useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/v1/keys/{key_id}', { params: { path: { key_id: id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: key }),
  });
  const isAdmin = atLeast(role, 'admin');
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <div>
      <PageHeader title="API keys" />
      <p className="muted">
        Keys let programs call the API as this workspace. Applications a person connected by OAuth (agents signing in through the console)
        are listed here too, as OAuth apps. Revoking either stops it at its next request; signed-in people are not affected.
      </p>
      {created && (
        <SecretOnce title={`Key "${created.name}" created`} secret={created.api_key} onDone={() => setCreated(null)}>
          <p className="small">
            Use it as <code>X-API-Key: {created.prefix}…</code> or <code>Authorization: Bearer …</code>. Its role: {created.role}.
          </p>
        </SecretOnce>
      )}
      {isAdmin && !created && (
        <form onSubmit={onSubmit} className="inline-form" aria-label="Create an API key">
          <Field label="Name">
            {(id) => (
              <input
                id={id}
                required
                maxLength={100}
                value={name}
                onChange={(e) => setName(e.target.value)}
                placeholder="e.g. nightly export"
              />
            )}
          </Field>
          <Field label="Role" hint="At most your own.">
            {(id, describedBy) => (
              <select id={id} aria-describedby={describedBy} value={keyRole} onChange={(e) => setKeyRole(e.target.value as Role)}>
                {ROLES.filter((r) => atLeast(role, r)).map((r) => (
                  <option key={r}>{r}</option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Expires (optional)">
            {(id) => <input id={id} type="date" value={expires} onChange={(e) => setExpires(e.target.value)} />}
          </Field>
          <SubmitButton pending={create.isPending} disabled={!name.trim()}>
            Create key
          </SubmitButton>
        </form>
      )}
      <ErrorNotice error={create.error ?? revoke.error} />
      <ErrorNotice error={keys.error} />
      {keys.data ? (
        <DataTable
          caption="API keys"
          testId="keys-table"
          data={keys.data}
          columns={[
            { header: 'Name', accessorKey: 'name' },
            {
              header: 'Kind',
              id: 'kind',
              accessorFn: (k) => (isOAuth(k) ? 'OAuth app' : 'API key'),
              cell: (c) => <KindCell apiKey={c.row.original} />,
            },
            { header: 'Key', accessorKey: 'prefix', cell: (c) => <code>{c.row.original.prefix}…</code> },
            { header: 'Role', accessorKey: 'role' },
            { header: 'State', id: 'state', accessorFn: keyState, cell: (c) => <StatusBadge status={keyState(c.row.original)} /> },
            {
              header: 'Last used',
              accessorKey: 'last_used_at',
              cell: (c) => (c.row.original.last_used_at ? formatDate(c.row.original.last_used_at) : 'never'),
            },
            { header: 'Created', accessorKey: 'created_at', cell: (c) => formatDate(c.row.original.created_at) },
            { header: 'Expires', accessorKey: 'expires_at', cell: (c) => formatDate(c.row.original.expires_at) },
            ...(isAdmin
              ? [
                  {
                    header: 'Actions',
                    id: 'actions',
                    enableSorting: false,
                    cell: (c: { row: { original: ApiKey } }) =>
                      keyState(c.row.original) === 'active' ? (
                        <ConfirmButton
                          label="Revoke"
                          danger
                          question={revokeQuestion(c.row.original)}
                          confirmLabel={isOAuth(c.row.original) ? 'Revoke its access' : 'Revoke the key'}
                          onConfirm={() => revoke.mutate(c.row.original.id)}
                        />
                      ) : null,
                  },
                ]
              : []),
          ]}
        />
      ) : (
        !keys.error && <Loading />
      )}
    </div>
  );
}
