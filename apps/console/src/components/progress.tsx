import type { Job } from '../api/client';
import { formatNumber } from '../format';

/** A job's progress: a bar while it runs (its total may be unknown), with the figures in words. */
export function JobProgress({
  job,
}: {
  job: Pick<Job, 'status' | 'progress_current' | 'progress_total' | 'requested_limit' | 'progress_message'>;
}) {
  const current = job.progress_current ?? 0;
  const total = job.progress_total ?? job.requested_limit;
  const done = job.status === 'completed';
  return (
    <div className="progress">
      <progress max={total || 1} value={done ? total || 1 : Math.min(current, total || current)} aria-label="Progress" />
      <span className="small" data-testid="progress-text">
        {formatNumber(current)} of {total ? formatNumber(total) : '?'}
        {job.progress_message ? ` · ${job.progress_message}` : ''}
      </span>
    </div>
  );
}
