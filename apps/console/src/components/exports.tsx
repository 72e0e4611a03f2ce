import { useMutation } from '@tanstack/react-query';
import { download } from '../api/client';
import { ErrorNotice } from './ui';

const FORMATS = [
  { format: 'json', label: 'JSON' },
  { format: 'csv', label: 'CSV' },
  { format: 'xlsx', label: 'Excel (xlsx)' },
  { format: 'ndjson', label: 'NDJSON' },
] as const;

/** Download buttons of a job's or batch's export, one per format. */
export function ExportButtons({ path, baseName, ready }: { path: string; baseName: string; ready: boolean }) {
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
        <p className="muted">Exports are ready when the work has finished.</p>
      )}
      <ErrorNotice error={exportAs.error} />
    </section>
  );
}
