import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useParams } from 'react-router';
import { useWorkspaceNavigate } from '../paths';
import { api, currentWorkspaceId, type Schemas, unwrap, unwrapPage } from '../api/client';
import { DataTable } from '../components/table';
import { ConfirmButton, ErrorNotice, formatDate, Loading, PageHeader, Pager, SecretOnce, StatusBadge } from '../components/ui';
import { atLeast } from '../roles';
import { useWorkspace } from '../session';
import { EventPicker } from './webhooks';

export default function WebhookDetail() {
  const { webhookId = '' } = useParams();
  const { role } = useWorkspace();
  const navigate = useWorkspaceNavigate();
  const queryClient = useQueryClient();
  const path = { params: { path: { webhook_id: webhookId } } };
  const key = [currentWorkspaceId(), 'webhook', webhookId];
  const hook = useQuery({ queryKey: key, queryFn: () => unwrap(api.GET('/v1/webhooks/{webhook_id}', path)) });
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const deliveriesKey = [currentWorkspaceId(), 'deliveries', webhookId];
  const deliveries = useQuery({
    queryKey: [...deliveriesKey, cursor],
    queryFn: () =>
      unwrapPage(
        api.GET('/v1/webhooks/{webhook_id}/deliveries', {
          params: { path: { webhook_id: webhookId }, query: { limit: 25, ...(cursor ? { starting_after: cursor } : {}) } },
        }),
      ),
    placeholderData: keepPreviousData,
    refetchInterval: 2_000,
  });
  const [secret, setSecret] = useState<Schemas['CreatedWebhook'] | null>(null);
  const [events, setEvents] = useState<Schemas['WebhookEventSelector'][] | null>(null);
  const refreshAll = () =>
    Promise.all([queryClient.invalidateQueries({ queryKey: key }), queryClient.invalidateQueries({ queryKey: deliveriesKey })]);
  const update = useMutation({
    mutationFn: (body: Schemas['WebhookUpdateRequest']) => unwrap(api.PATCH('/v1/webhooks/{webhook_id}', { ...path, body })),
    onSuccess: () => {
      setEvents(null);
      void refreshAll();
    },
  });
  const test = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/webhooks/{webhook_id}/test', path)),
    onSuccess: () => void refreshAll(),
  });
  const rotate = useMutation({ mutationFn: () => unwrap(api.POST('/v1/webhooks/{webhook_id}/rotate-secret', path)), onSuccess: setSecret });
  const redeliver = useMutation({
    mutationFn: (deliveryId: string) =>
      unwrap(
        api.POST('/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver', {
          params: { path: { webhook_id: webhookId, delivery_id: deliveryId } },
        }),
      ),
    onSuccess: () => void refreshAll(),
  });
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/v1/webhooks/{webhook_id}', path)),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: [currentWorkspaceId(), 'webhooks'] });
      void navigate('/webhooks');
    },
  });
  if (hook.error) return <ErrorNotice error={hook.error} />;
  const h = hook.data;
  if (!h) return <Loading />;
  const isAdmin = atLeast(role, 'admin');
  return (
    <div>
      <PageHeader title="Webhook">
        {isAdmin && (
          <>
            <button type="button" onClick={() => test.mutate()} disabled={test.isPending}>
              Send a test event
            </button>
            <button type="button" onClick={() => update.mutate({ enabled: !h.enabled })} disabled={update.isPending}>
              {h.enabled ? 'Pause' : 'Resume'}
            </button>
            <ConfirmButton
              label="Rotate secret"
              question="Make a new signing secret? The old one keeps signing beside it for 24 hours, so receivers can switch."
              onConfirm={() => rotate.mutate()}
            />
            <ConfirmButton
              label="Delete"
              danger
              question={`Delete the webhook to ${h.url}? No more events are sent to it.`}
              onConfirm={() => remove.mutate()}
            />
          </>
        )}
      </PageHeader>
      <ErrorNotice error={test.error ?? update.error ?? rotate.error ?? redeliver.error ?? remove.error} />
      {secret && <SecretOnce title="New signing secret" keptToSign secret={secret.secret} onDone={() => setSecret(null)} />}
      <dl className="facts">
        <dt>URL</dt>
        <dd className="target">{h.url}</dd>
        <dt>State</dt>
        <dd>
          <StatusBadge status={h.enabled ? 'active' : 'paused'} />
        </dd>
        <dt>Events</dt>
        <dd>{h.events.includes('*') ? 'every event' : h.events.join(', ')}</dd>
        {h.description && (
          <>
            <dt>Description</dt>
            <dd>{h.description}</dd>
          </>
        )}
        <dt>Created</dt>
        <dd>{formatDate(h.created_at)}</dd>
      </dl>
      {isAdmin &&
        (events ? (
          <form
            className="stack"
            onSubmit={(e) => {
              e.preventDefault();
              update.mutate({ events });
            }}
          >
            <EventPicker value={events} onChange={setEvents} />
            <div className="actions">
              <button type="submit" className="primary" disabled={events.length === 0}>
                Save events
              </button>
              <button type="button" onClick={() => setEvents(null)}>
                Cancel
              </button>
            </div>
          </form>
        ) : (
          <button type="button" onClick={() => setEvents(h.events)}>
            Change events
          </button>
        ))}
      <section aria-labelledby="deliveries-title">
        <h2 id="deliveries-title">Deliveries</h2>
        <ErrorNotice error={deliveries.error} />
        {deliveries.data ? (
          <>
            <DataTable
              caption="Deliveries"
              testId="deliveries-table"
              data={deliveries.data.items}
              empty="Nothing delivered yet. Send a test event to try the receiver."
              columns={[
                { header: 'Event', accessorKey: 'event_type', cell: (c) => <code>{c.row.original.event_type}</code> },
                { header: 'Status', accessorKey: 'status', cell: (c) => <StatusBadge status={c.row.original.status} /> },
                { header: 'Attempts', accessorKey: 'attempts' },
                {
                  header: 'Answer',
                  id: 'answer',
                  enableSorting: false,
                  cell: (c) =>
                    (c.row.original.response_status ? `HTTP ${c.row.original.response_status}` : '') +
                    (c.row.original.error ? ` ${c.row.original.error}` : ''),
                },
                { header: 'Next attempt', accessorKey: 'next_attempt_at', cell: (c) => formatDate(c.row.original.next_attempt_at) },
                { header: 'Created', accessorKey: 'created_at', cell: (c) => formatDate(c.row.original.created_at) },
                ...(isAdmin
                  ? [
                      {
                        header: 'Actions',
                        id: 'actions',
                        enableSorting: false,
                        cell: (c: { row: { original: { id: string } } }) => (
                          <button type="button" onClick={() => redeliver.mutate(c.row.original.id)}>
                            Redeliver
                          </button>
                        ),
                      },
                    ]
                  : []),
              ]}
            />
            <Pager
              hasPrevious={cursors.length > 0}
              hasNext={Boolean(deliveries.data.next)}
              onPrevious={() => setCursors((c) => c.slice(0, -1))}
              onNext={() => setCursors((c) => [...c, deliveries.data.next!])}
            />
          </>
        ) : (
          !deliveries.error && <Loading />
        )}
      </section>
    </div>
  );
}
