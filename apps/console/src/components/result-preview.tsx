import { useQuery } from '@tanstack/react-query';
import type { ColumnDef } from '@tanstack/react-table';
import { api, currentWorkspaceId, type Job, unwrap } from '../api/client';
import { plural } from '../format';
import { DataTable } from './table';
import { ErrorNotice, Loading } from './ui';

type Row = Record<string, unknown>;
const PREVIEW = 20;

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

/** The first items of a completed job, from GET /v1/jobs/{id}/items (one page, however large the result). */
export function ResultPreview({ job }: { job: Job }) {
  const items = useQuery({
    queryKey: [currentWorkspaceId(), 'job-items', job.id],
    enabled: job.status === 'completed',
    queryFn: async (): Promise<Row[]> => (await unwrap(api.GET('/v1/jobs/{job_id}/items', { params: { path: { job_id: job.id }, query: { limit: PREVIEW } } }))).items,
  });
  if (job.status !== 'completed') return <p className="muted">The result appears here when the job has completed.</p>;
  if (items.error) return <ErrorNotice error={items.error} />;
  const rows = items.data;
  if (!rows) return <Loading label="Reading the result" />;
  return (
    <>
      <p className="muted small">
        The first {Math.min(PREVIEW, rows.length)} of {plural(job.result_count ?? rows.length, 'item', 'items')}. Export for all of them.
      </p>
      <DataTable caption="Result preview" data={rows} columns={columnsOf(rows)} empty="The job delivered no items." testId="result-preview" />
    </>
  );
}
