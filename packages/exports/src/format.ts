export type ExportFormat = 'json' | 'ndjson' | 'csv' | 'xlsx';
export type ExportSubject = 'job' | 'batch' | 'monitor';

export const EXPORT_FORMATS: readonly ExportFormat[] = ['json', 'ndjson', 'csv', 'xlsx'];

const CONTENT_TYPES: Readonly<Record<ExportFormat, string>> = {
  json: 'application/json; charset=utf-8',
  // One JSON value per line (https://github.com/ndjson/ndjson-spec); UTF-8 like JSON itself.
  ndjson: 'application/x-ndjson',
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

/** Resource ID prefixes (decisions.md: `job_…`, `bat_…`; a monitor's series `mon_…`). */
const ID_PREFIXES: Readonly<Record<ExportSubject, string>> = { job: 'job_', batch: 'bat_', monitor: 'mon_' };

export function isExportFormat(value: unknown): value is ExportFormat {
  return typeof value === 'string' && (EXPORT_FORMATS as readonly string[]).includes(value);
}

/** The Content-Type header of an export body. */
export function exportContentType(format: ExportFormat): string {
  return CONTENT_TYPES[format];
}

/**
 * The download name: the resource ID (prefixed `job_` or `bat_` when it is not already)
 * and the format's extension, e.g. `job_01ABC.csv`. Characters outside [A-Za-z0-9_-]
 * become `_` so the name is safe in a header.
 */
export function exportFileName(kind: ExportSubject, id: string, format: ExportFormat): string {
  const prefix = ID_PREFIXES[kind];
  const safe = id.replace(/[^A-Za-z0-9_-]/g, '_');
  return `${safe.startsWith(prefix) ? safe : prefix + safe}.${format}`;
}
