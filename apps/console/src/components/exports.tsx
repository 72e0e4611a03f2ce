import { useMutation } from '@tanstack/react-query';
import { download } from '../api/client';
import { ErrorNotice } from './ui';

const FORMATS = [
  { format: 'json', label: 'JSON' },
  { format: 'csv', label: 'CSV' },
  { format: 'xlsx', label: 'Excel (xlsx)' },
  { format: 'ndjson', label: 'NDJSON' },
] as const;

/** Why there is nothing to export, once the work has ended without a result; null while it may still get one. */
function nothingToExport(status: string | undefined): string | null {
  if (status === 'cancelled') return 'Nothing to export: the work was cancelled before it delivered a result.';
  if (status === 'failed') return 'Nothing to export: the work failed without delivering a result.';
  return null;
}

/** Download buttons of a job's or batch's export, one per format; `status` is the work's, to say when nothing will come. */
export function ExportButtons({ path, baseName, ready, status }: { path: string; baseName: string; ready: boolean; status?: string }) {
  const exportAs = useMutation({ mutationFn: (format: string) => download(`${path}?format=${format}`, `${baseName}.${format}`) });
  return (
    <section aria-labelledby="export-title">
      <h2 id="export-title">Export</h2>
      {ready ? (
        <div className="actions">
          {FORMATS.map(({ format, label }) => (
            <button key={format} type="button" onClick={() => exportAs.mutate(format)} disabled={exportAs.isPending}>
              Download {label}
            </button>
          ))}
        </div>
      ) : (
        <p className="muted" data-testid="export-note">
          {nothingToExport(status) ?? 'Exports are ready when the work has finished.'}
        </p>
      )}
      <ErrorNotice error={exportAs.error} />
    </section>
  );
}
