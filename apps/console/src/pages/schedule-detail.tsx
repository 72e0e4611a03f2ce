import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { useWorkspaceNavigate } from '../paths';
import { WorkspaceLink } from '../components/workspace-link';
import { api, currentWorkspaceId, type ScheduleRun, unwrap } from '../api/client';
import { DataTable } from '../components/table';
import { ConfirmButton, ErrorNotice, formatDate, Loading, PageHeader, StatusBadge } from '../components/ui';
import { plural } from '../format';
import { inZone } from '../components/zones';
import { atLeast } from '../roles';
import { useWorkspace } from '../session';

/** What happened at a run, in words; a skipped run says why nothing was created. */
export function runOutcome(run: ScheduleRun) {
  switch (run.status) {
    case 'queued':
      return run.job_id ? (
        <>
          Ran job <WorkspaceLink to={`/jobs/${run.job_id}`}>{run.job_id}</WorkspaceLink>
        </>
      ) : run.batch_id ? (
        <>
          Ran batch <WorkspaceLink to={`/batches/${run.batch_id}`}>{run.batch_id}</WorkspaceLink>
        </>
      ) : (
        'Dispatched'
      );
    case 'skipped_credits':
      return 'Skipped: the workspace had too few credits when it was due, so nothing was created or charged.';
    case 'skipped_overlap':
      return "Skipped: the previous run's work was still going (the schedule skips overlapping runs).";
    case 'failed':
      return `Failed to start: ${run.error?.message ?? 'no reason given'}${run.error?.error ? ` (${run.error.error})` : ''}`;
    default:
      return run.status;
  }
}

export default function ScheduleDetail() {
  const { scheduleId = '' } = useParams();
  const { role } = useWorkspace();
  const navigate = useWorkspaceNavigate();
  const queryClient = useQueryClient();
  const key = [currentWorkspaceId(), 'schedule', scheduleId];
  const schedule = useQuery({
    queryKey: key,
    queryFn: () => unwrap(api.GET('/v1/schedules/{schedule_id}', { params: { path: { schedule_id: scheduleId } } })),
    refetchInterval: 5_000,
  });
  const path = { params: { path: { schedule_id: scheduleId } } };
  const act = useMutation({
    mutationFn: async (action: 'pause' | 'resume' | 'run') => {
      if (action === 'pause') return unwrap(api.POST('/v1/schedules/{schedule_id}/pause', path));
      if (action === 'resume') return unwrap(api.POST('/v1/schedules/{schedule_id}/resume', path));
      return unwrap(api.POST('/v1/schedules/{schedule_id}/run', path));
    },
    onSuccess: (updated) => queryClient.setQueryData(key, updated),
  });
  const remove = useMutation({
    mutationFn: () => unwrap(api.DELETE('/v1/schedules/{schedule_id}', path)),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: [currentWorkspaceId(), 'schedules'] });
      void navigate('/schedules');
    },
  });
  if (schedule.error) return <ErrorNotice error={schedule.error} />;
  const s = schedule.data;
  if (!s) return <Loading />;
  const canWrite = atLeast(role, 'member');
  return (
    <div>
      <PageHeader title={s.name}>
        {canWrite && (
          <>
            {s.status === 'active' && (
              <button type="button" onClick={() => act.mutate('pause')} disabled={act.isPending}>
                Pause
              </button>
            )}
            {s.status === 'paused' && (
              <button type="button" onClick={() => act.mutate('resume')} disabled={act.isPending}>
                Resume
              </button>
            )}
            <button type="button" onClick={() => act.mutate('run')} disabled={act.isPending}>
              Run now
            </button>
            <WorkspaceLink className="button" to={`/schedules/${s.id}/edit`}>
              Edit
            </WorkspaceLink>
            <ConfirmButton
              label="Delete"
              danger
              question={`Delete the schedule "${s.name}"? Its past jobs and their results are kept.`}
              onConfirm={() => remove.mutate()}
            />
          </>
        )}
      </PageHeader>
      <ErrorNotice error={act.error ?? remove.error} />
      <dl className="facts">
        <dt>Status</dt>
        <dd>
          <StatusBadge status={s.status} />
        </dd>
        <dt>What</dt>
        <dd>
          {s.platform} · {s.operation} · {plural(s.requested_limit, 'result', 'results')} per target ·{' '}
          {s.delivery === 'new_only' ? 'only new items' : 'everything'}
        </dd>
        <dt>Targets</dt>
        <dd className="target">{s.targets.join(', ')}</dd>
        <dt>Repeats</dt>
        <dd>
          {s.frequency}, from {inZone(s.starts_at, s.timezone)} ({s.timezone})
        </dd>
        <dt>Next run</dt>
        <dd>{s.next_run_at ? `${inZone(s.next_run_at, s.timezone)} · ${inZone(s.next_run_at, 'UTC')}` : '—'}</dd>
        <dt>Last run</dt>
        <dd>{formatDate(s.last_run_at)}</dd>
      </dl>
      <section aria-labelledby="runs-title">
        <h2 id="runs-title">Run history</h2>
        <DataTable
          caption="Runs"
          testId="schedule-runs"
          data={s.runs ?? []}
          empty="No run yet."
          columns={[
            { header: 'Due', accessorKey: 'scheduled_for', cell: (c) => inZone(c.row.original.scheduled_for, s.timezone) },
            { header: 'Trigger', accessorKey: 'trigger' },
            { header: 'Status', accessorKey: 'status', cell: (c) => <StatusBadge status={c.row.original.status} /> },
            { header: 'Outcome', id: 'outcome', enableSorting: false, cell: (c) => runOutcome(c.row.original) },
          ]}
        />
        <p>
          <WorkspaceLink to={`/jobs?schedule_id=${s.id}`}>All jobs of this schedule</WorkspaceLink>
        </p>
      </section>
    </div>
  );
}
