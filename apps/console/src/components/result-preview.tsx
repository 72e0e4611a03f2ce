import { useQuery } from '@tanstack/react-query';
import type { ColumnDef } from '@tanstack/react-table';
import { api, ApiProblem, currentWorkspaceId, type Job, unwrap } from '../api/client';
import { DataTable } from './table';
import { ErrorNotice, Loading } from './ui';

type Row = Record<string, unknown>;
const PREVIEW = 20;

/** The items of a result however it is shaped: a list, a profile bundle or one item. */
export function itemsOf(result: unknown): Row[] {
  if (Array.isArray(result)) return result as Row[];
  if (result && typeof result === 'object') {
    const bundle = result as { profile?: Row; posts?: Row[] };
    if (bundle.profile && Array.isArray(bundle.posts)) return [bundle.profile, ...bundle.posts];
    return [result as Row];
  }
  return [];
}

function show(value: unknown): string {
  if (value == null) return '';
  if (typeof value === 'object') {
    const text = JSON.stringify(value);
    return text.length > 80 ? `${text.slice(0, 79)}…` : text;
  }
  const text = String(value);
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}

/** Up to 12 columns: the keys the first items have, in first-seen order. */
function columnsOf(rows: Row[]): ColumnDef<Row, any>[] {
  const keys: string[] = [];
  for (const row of rows) for (const key of Object.keys(row)) if (!keys.includes(key)) keys.push(key);
  return keys.slice(0, 12).map((key) => ({ header: key, id: key, accessorFn: (row: Row) => show(row[key]) }));
}

/**
 * The first items of a completed job: from GET /v1/jobs/{id}/items (a page, however large the
 * result), or from the job's result where that operation is not served.
 */
export function ResultPreview({ job }: { job: Job }) {
  const items = useQuery({
    queryKey: [currentWorkspaceId(), 'job-items', job.id],
    enabled: job.status === 'completed',
    queryFn: async (): Promise<Row[] | 'no-items-endpoint'> => {
      try {
        const page = await unwrap(api.GET('/v1/jobs/{job_id}/items', { params: { path: { job_id: job.id }, query: { limit: PREVIEW } } }));
        return page.items as Row[];
      } catch (error) {
        if (error instanceof ApiProblem && error.status === 404 && error.code === 'not_found') return 'no-items-endpoint';
        throw error;
      }
    },
  });
  if (job.status !== 'completed') return <p className="muted">The result appears here when the job has completed.</p>;
  if (items.error) return <ErrorNotice error={items.error} />;
  // Without the items endpoint, the job's own result (read again once the job has ended).
  const rows = items.data === 'no-items-endpoint' ? (job.result == null && job.result_count ? undefined : itemsOf(job.result).slice(0, PREVIEW)) : items.data;
  if (!rows) return <Loading label="Reading the result" />;
  return (
    <>
      <p className="muted small">
        The first {Math.min(PREVIEW, rows.length)} of {(job.result_count ?? rows.length).toLocaleString()} items. Export for all of them.
      </p>
      <DataTable caption="Result preview" data={rows} columns={columnsOf(rows)} empty="The job delivered no items." testId="result-preview" />
    </>
  );
}
