import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { WorkspaceLink } from '../components/workspace-link';
import { api, unwrap } from '../api/client';
import { isTerminal } from '../api/jobs';
import { useLiveBatch } from '../api/live';
import { ExportButtons } from '../components/exports';
import { BatchResults } from '../components/results-browser';
import { DataTable } from '../components/table';
import { ConfirmButton, ErrorNotice, formatDate, formatNumber, Loading, PageHeader, StatusBadge } from '../components/ui';
import { plural } from '../format';
import { atLeast } from '../roles';
import { useWorkspace } from '../session';
import { childStates } from './batches';

export default function BatchDetail() {
  const { batchId = '' } = useParams();
  const { role } = useWorkspace();
  const queryClient = useQueryClient();
  const batch = useLiveBatch(batchId);
  const cancel = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/batches/{batch_id}/cancel', { params: { path: { batch_id: batchId } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: batch.queryKey }),
  });
  if (batch.error) return <ErrorNotice error={batch.error} />;
  const b = batch.data;
  if (!b) return <Loading />;
  const done = b.completed_count + b.failed_count + b.cancelled_count;
  return (
    <div>
      <PageHeader title={`Batch ${b.id}`}>
        {atLeast(role, 'member') && !isTerminal(b.status) && (
          <ConfirmButton
            label="Cancel batch"
            danger
            question="Cancel every child of this batch that has not finished?"
            confirmLabel="Cancel the batch"
            onConfirm={() => cancel.mutate()}
          />
        )}
      </PageHeader>
      <ErrorNotice error={cancel.error} />
      <dl className="facts">
        <dt>Status</dt>
        <dd>
          <StatusBadge status={b.status} />
        </dd>
        <dt>What</dt>
        <dd>
          {b.platform} · {b.operation} · {plural(b.target_count, 'target', 'targets')} × {plural(b.requested_limit, 'result', 'results')}
        </dd>
        <dt>Children</dt>
        <dd>
          <progress max={b.target_count} value={done} aria-label="Children finished" /> {childStates(b)}
        </dd>
        <dt>Credits</dt>
        <dd>
          {formatNumber(b.billed_credits)} charged · {formatNumber(b.reserved_credits)} held
        </dd>
        <dt>Results</dt>
        <dd>{formatNumber(b.result_count)}</dd>
        <dt>Created</dt>
        <dd>{formatDate(b.created_at)}</dd>
      </dl>
      <ExportButtons
        path={`/v1/batches/${b.id}/export`}
        baseName={b.id}
        ready={isTerminal(b.status) && b.completed_count > 0}
        status={b.status}
      />
      <section aria-labelledby="results-title">
        <h2 id="results-title">Results</h2>
        <BatchResults batch={b} />
      </section>
      <section aria-labelledby="children-title">
        <h2 id="children-title">Children</h2>
        <DataTable
          caption="Child jobs"
          data={b.jobs ?? []}
          columns={[
            { header: 'Target', accessorKey: 'target', cell: (c) => <span className="target">{c.row.original.target}</span> },
            {
              header: 'Job',
              accessorKey: 'id',
              cell: (c) => (
                <WorkspaceLink to={`/jobs/${c.row.original.id}`}>
                  <code>{c.row.original.id}</code>
                </WorkspaceLink>
              ),
            },
            { header: 'Status', accessorKey: 'status', cell: (c) => <StatusBadge status={c.row.original.status} /> },
          ]}
        />
      </section>
    </div>
  );
}
