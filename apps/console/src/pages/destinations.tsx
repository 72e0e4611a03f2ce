import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, currentWorkspaceId, type Schemas, unwrap } from '../api/client';
import { DataTable } from '../components/table';
import { ConfirmButton, ErrorNotice, Field, formatDate, Loading, PageHeader, SubmitButton } from '../components/ui';
import { atLeast } from '../roles';
import { useWorkspace } from '../session';

type Format = Schemas['Destination']['format'];
const FORMATS: Format[] = ['ndjson', 'json', 'csv', 'xlsx'];

/** What the creation form holds; the secret is sent once and never shown again. */
interface Draft {
  name: string;
  bucket: string;
  prefix: string;
  region: string;
  endpoint: string;
  forcePathStyle: boolean;
  accessKeyId: string;
  secretAccessKey: string;
  format: Format;
}

const EMPTY: Draft = {
  name: '',
  bucket: '',
  prefix: '',
  region: 'us-east-1',
  endpoint: '',
  forcePathStyle: false,
  accessKeyId: '',
  secretAccessKey: '',
  format: 'ndjson',
};

/**
 * Destinations: the workspace's buckets, where a job's (a batch's) export is written when it
 * ends. Admins add one (the service writes and deletes a check object first; its refusal is
 * shown as the store said it) or delete one; every role sees the list, never a secret.
 */
export default function Destinations() {
  const { role } = useWorkspace();
  const queryClient = useQueryClient();
  const key = [currentWorkspaceId(), 'destinations'];
  const destinations = useQuery({ queryKey: key, queryFn: () => unwrap(api.GET('/v1/destinations')) });
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const set = <K extends keyof Draft>(name: K, value: Draft[K]) => setDraft((d) => ({ ...d, [name]: value }));
  const create = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/v1/destinations', {
          body: {
            name: draft.name.trim(),
            type: 's3',
            bucket: draft.bucket.trim(),
            prefix: draft.prefix,
            region: draft.region.trim() || 'us-east-1',
            endpoint: draft.endpoint.trim() || null,
            force_path_style: draft.endpoint.trim() ? draft.forcePathStyle : false,
            access_key_id: draft.accessKeyId.trim(),
            secret_access_key: draft.secretAccessKey,
            format: draft.format,
          },
        }),
      ),
    onSuccess: () => {
      setDraft(EMPTY);
      void queryClient.invalidateQueries({ queryKey: key });
    },
  });
  const remove = useMutation({
    mutationFn: (destinationId: string) =>
      unwrap(api.DELETE('/v1/destinations/{destination_id}', { params: { path: { destination_id: destinationId } } })),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: key }),
  });
  const isAdmin = atLeast(role, 'admin');
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  const ready = draft.name.trim() && draft.bucket.trim() && draft.accessKeyId.trim() && draft.secretAccessKey;
  return (
    <div>
      <PageHeader title="Destinations" />
      <p className="muted">
        A job or batch submitted with a destination has its export written to <code>{'{prefix}{job_id}.{ext}'}</code> (a batch:{' '}
        <code>{'{prefix}{batch_id}.{ext}'}</code>) in the bucket when it ends, retried like webhook deliveries. Delivery costs no credits.
      </p>
      {isAdmin && (
        <form onSubmit={onSubmit} className="stack" aria-label="Add a destination">
          <div className="row">
            <Field label="Name">
              {(id) => <input id={id} required maxLength={120} value={draft.name} onChange={(e) => set('name', e.target.value)} />}
            </Field>
            <Field label="Bucket">
              {(id) => <input id={id} required maxLength={63} value={draft.bucket} onChange={(e) => set('bucket', e.target.value)} />}
            </Field>
            <Field label="Prefix (optional)" hint="Put before every key, e.g. sdx/.">
              {(id, describedBy) => (
                <input
                  id={id}
                  maxLength={512}
                  aria-describedby={describedBy}
                  value={draft.prefix}
                  onChange={(e) => set('prefix', e.target.value)}
                />
              )}
            </Field>
            <Field label="Region">
              {(id) => <input id={id} maxLength={32} value={draft.region} onChange={(e) => set('region', e.target.value)} />}
            </Field>
          </div>
          <div className="row">
            <Field label="Endpoint (optional)" hint="An S3-compatible store's URL; empty for AWS.">
              {(id, describedBy) => (
                <input
                  id={id}
                  type="url"
                  aria-describedby={describedBy}
                  value={draft.endpoint}
                  onChange={(e) => set('endpoint', e.target.value)}
                />
              )}
            </Field>
            <label>
              <input type="checkbox" checked={draft.forcePathStyle} onChange={(e) => set('forcePathStyle', e.target.checked)} /> Path-style
              addressing
            </label>
            <Field label="Format">
              {(id) => (
                <select id={id} value={draft.format} onChange={(e) => set('format', e.target.value as Format)}>
                  {FORMATS.map((f) => (
                    <option key={f} value={f}>
                      {f}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          </div>
          <div className="row">
            <Field label="Access key ID">
              {(id) => (
                <input id={id} required autoComplete="off" value={draft.accessKeyId} onChange={(e) => set('accessKeyId', e.target.value)} />
              )}
            </Field>
            <Field label="Secret access key" hint="Stored encrypted; never shown again.">
              {(id, describedBy) => (
                <input
                  id={id}
                  type="password"
                  required
                  autoComplete="new-password"
                  aria-describedby={describedBy}
                  value={draft.secretAccessKey}
                  onChange={(e) => set('secretAccessKey', e.target.value)}
                />
              )}
            </Field>
          </div>
          <SubmitButton pending={create.isPending} disabled={!ready}>
            Add destination
          </SubmitButton>
        </form>
      )}
      <ErrorNotice error={create.error ?? remove.error ?? destinations.error} />
      {destinations.data ? (
        <DataTable
          caption="Destinations"
          testId="destinations-table"
          data={destinations.data}
          empty="No destination yet."
          columns={[
            { header: 'Name', accessorKey: 'name' },
            { header: 'Bucket', id: 'bucket', accessorFn: (d) => `${d.bucket}/${d.prefix}` },
            { header: 'Endpoint', id: 'endpoint', accessorFn: (d) => d.endpoint ?? `AWS ${d.region}` },
            { header: 'Format', accessorKey: 'format' },
            { header: 'Access key ID', accessorKey: 'access_key_id' },
            { header: 'Created', accessorKey: 'created_at', cell: (c) => formatDate(c.row.original.created_at) },
            ...(isAdmin
              ? [
                  {
                    header: 'Actions',
                    id: 'actions',
                    cell: (c: { row: { original: Schemas['Destination'] } }) => (
                      <ConfirmButton
                        label="Delete"
                        danger
                        question={`Delete the destination ${c.row.original.name}? Deliveries still pending to it fail; objects already written stay in the bucket.`}
                        onConfirm={() => remove.mutate(c.row.original.id)}
                      />
                    ),
                  },
                ]
              : []),
          ]}
        />
      ) : (
        !destinations.error && <Loading />
      )}
    </div>
  );
}
