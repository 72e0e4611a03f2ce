import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { api, unwrap } from '../api/client';
import { isTerminal } from '../api/jobs';
import { useLiveJob } from '../api/live';
import { ExportButtons } from '../components/exports';
import { JobProgress } from '../components/progress';
import { ResultsBrowser } from '../components/results-browser';
import { ConfirmButton, ErrorNotice, formatDate, formatNumber, Loading, PageHeader, StatusBadge } from '../components/ui';
import { plural } from '../format';
import { atLeast } from '../roles';
import { useWorkspace } from '../session';

export default function JobDetail() {
  const { jobId = '' } = useParams();
  const { role } = useWorkspace();
  const queryClient = useQueryClient();
  const job = useLiveJob(jobId);
  const cancel = useMutation({
    mutationFn: () => unwrap(api.POST('/v1/jobs/{job_id}/cancel', { params: { path: { job_id: jobId } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: job.queryKey }),
  });
  if (job.error) return <ErrorNotice error={job.error} />;
  const j = job.data;
  if (!j) return <Loading />;
  const error = j.error as { code?: string; message?: string; retryable?: boolean } | null;
  return (
    <div>
      <PageHeader title={`Job ${j.id}`}>
        {atLeast(role, 'member') && !isTerminal(j.status) && (
          <ConfirmButton
            label="Cancel job"
            danger
            question="Cancel this job? Whatever it has not delivered yet is not charged."
            confirmLabel="Cancel the job"
            onConfirm={() => cancel.mutate()}
          />
        )}
      </PageHeader>
      <ErrorNotice error={cancel.error} />
      <dl className="facts">
        <dt>Status</dt>
        <dd data-testid="job-status">
          <StatusBadge status={j.status} />
          {j.cached && ' (from the cache)'}
          {j.deduplicated && ' (joined identical work in progress)'}
          {!isTerminal(j.status) && (
            <span className="muted small" data-testid="live-mode">
              {' '}
              · {job.mode === 'stream' ? 'live' : job.mode === 'polling' ? 'refreshing every second' : 'connecting…'}
            </span>
          )}
        </dd>
        <dt>What</dt>
        <dd>
          {j.platform} · {j.operation} · <span className="target">{j.target}</span>
        </dd>
        <dt>Progress</dt>
        <dd>
          <JobProgress job={j} />
        </dd>
      </dl>
      <div className="two-columns">
        <section aria-labelledby="attempts-title">
          <h2 id="attempts-title">Timeline</h2>
          <dl className="facts">
            <dt>Attempts</dt>
            <dd>
              {j.attempts} of at most {j.max_attempts}
            </dd>
            <dt>Created</dt>
            <dd>{formatDate(j.created_at)}</dd>
            <dt>Started</dt>
            <dd>{formatDate(j.started_at)}</dd>
            <dt>Last heartbeat</dt>
            <dd>{formatDate(j.heartbeat_at)}</dd>
            {j.next_attempt_at && (
              <>
                <dt>Next attempt</dt>
                <dd>{formatDate(j.next_attempt_at)}</dd>
              </>
            )}
            <dt>Finished</dt>
            <dd>{formatDate(j.finished_at)}</dd>
            {j.cancel_requested_at && (
              <>
                <dt>Cancel requested</dt>
                <dd>{formatDate(j.cancel_requested_at)}</dd>
              </>
            )}
          </dl>
          {error && (
            <div className="notice notice-error">
              <strong>{error.code ?? 'error'}</strong>: {error.message ?? JSON.stringify(error)}
              {error.retryable ? ' (retryable)' : ''}
            </div>
          )}
        </section>
        <section aria-labelledby="billing-title">
          <h2 id="billing-title">Billing</h2>
          <dl className="facts">
            <dt>Results asked for</dt>
            <dd>{formatNumber(j.requested_limit)}</dd>
            <dt>Held now</dt>
            <dd>{plural(j.reserved_credits, 'credit', 'credits')}</dd>
            <dt>Results billed</dt>
            <dd>{formatNumber(j.billed_units)}</dd>
            <dt>Rate</dt>
            <dd>{plural(j.credit_rate, 'credit', 'credits')} per result</dd>
            <dt>Charged</dt>
            <dd data-testid="billed-credits">{plural(j.billed_credits, 'credit', 'credits')}</dd>
          </dl>
        </section>
      </div>
      <ExportButtons path={`/v1/jobs/${j.id}/export`} baseName={j.id} ready={j.status === 'completed'} status={j.status} />
      <section aria-labelledby="result-title">
        <h2 id="result-title">Result</h2>
        <ResultsBrowser job={j} />
      </section>
    </div>
  );
}
