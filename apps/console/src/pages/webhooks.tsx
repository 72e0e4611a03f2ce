import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useWorkspaceNavigate } from '../paths';
import { WorkspaceLink } from '../components/workspace-link';
import { WEBHOOK_EVENT_TYPES } from '@sdx/contract';
import { api, currentWorkspaceId, type Schemas, unwrap } from '../api/client';
import { DataTable } from '../components/table';
import { ErrorNotice, Field, formatDate, Loading, PageHeader, SecretOnce, StatusBadge, SubmitButton } from '../components/ui';
import { atLeast } from '../roles';
import { useWorkspace } from '../session';

type EventSelector = Schemas['WebhookEventSelector'];

/** The events a webhook is sent, as checkboxes ("every event" is `*`). */
export function EventPicker({ value, onChange }: { value: EventSelector[]; onChange: (events: EventSelector[]) => void }) {
  const all = value.includes('*');
  return (
    <fieldset className="events">
      <legend>Events</legend>
      <label>
        <input type="checkbox" checked={all} onChange={(e) => onChange(e.target.checked ? ['*'] : [])} /> Every event
      </label>
      {WEBHOOK_EVENT_TYPES.map((event) => (
        <label key={event}>
          <input
            type="checkbox"
            disabled={all}
            checked={all || value.includes(event)}
            onChange={(e) => onChange(e.target.checked ? [...value, event] : value.filter((v) => v !== event))}
          />{' '}
          <code>{event}</code>
        </label>
      ))}
    </fieldset>
  );
}

export default function Webhooks() {
  const { role } = useWorkspace();
  const navigate = useWorkspaceNavigate();
  const queryClient = useQueryClient();
  const key = [currentWorkspaceId(), 'webhooks'];
  const hooks = useQuery({ queryKey: key, queryFn: () => unwrap(api.GET('/v1/webhooks')) });
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<EventSelector[]>(['*']);
  const [created, setCreated] = useState<Schemas['CreatedWebhook'] | null>(null);
  const create = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/v1/webhooks', { body: { url: url.trim(), events, ...(description.trim() ? { description: description.trim() } : {}) } }),
      ),
    onSuccess: (hook) => {
      setCreated(hook);
      setUrl('');
      setDescription('');
      void queryClient.invalidateQueries({ queryKey: key });
    },
  });
  const isAdmin = atLeast(role, 'admin');
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <div>
      <PageHeader title="Webhooks" />
      <p className="muted">
        The service POSTs an event to each URL when work ends or a schedule runs, signed with the webhook's secret (Standard Webhooks
        headers <code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>). Failed deliveries are retried for
        about a day.
      </p>
      {created && (
        <SecretOnce
          title="Webhook created: its signing secret"
          keptToSign
          secret={created.secret}
          onDone={() => void navigate(`/webhooks/${created.id}`)}
        >
          <p className="small">Verify each delivery's signature with it. Rotating the secret later shows a new one once.</p>
        </SecretOnce>
      )}
      {isAdmin && !created && (
        <form onSubmit={onSubmit} className="stack" aria-label="Add a webhook">
          <div className="row">
            <Field label="URL" hint="https://… where your receiver listens.">
              {(id, describedBy) => (
                <input id={id} type="url" required aria-describedby={describedBy} value={url} onChange={(e) => setUrl(e.target.value)} />
              )}
            </Field>
            <Field label="Description (optional)">
              {(id) => <input id={id} maxLength={200} value={description} onChange={(e) => setDescription(e.target.value)} />}
            </Field>
          </div>
          <EventPicker value={events} onChange={setEvents} />
          <SubmitButton pending={create.isPending} disabled={!url.trim() || events.length === 0}>
            Add webhook
          </SubmitButton>
        </form>
      )}
      <ErrorNotice error={create.error ?? hooks.error} />
      {hooks.data ? (
        <DataTable
          caption="Webhooks"
          testId="webhooks-table"
          data={hooks.data}
          empty="No webhook yet."
          columns={[
            {
              header: 'URL',
              accessorKey: 'url',
              cell: (c) => <WorkspaceLink to={`/webhooks/${c.row.original.id}`}>{c.row.original.url}</WorkspaceLink>,
            },
            { header: 'Events', id: 'events', accessorFn: (h) => h.events.join(', ') },
            {
              header: 'State',
              id: 'enabled',
              accessorFn: (h) => (h.enabled ? 'active' : 'paused'),
              cell: (c) => <StatusBadge status={c.row.original.enabled ? 'active' : 'paused'} />,
            },
            { header: 'Description', accessorKey: 'description' },
            { header: 'Created', accessorKey: 'created_at', cell: (c) => formatDate(c.row.original.created_at) },
          ]}
        />
      ) : (
        !hooks.error && <Loading />
      )}
    </div>
  );
}
