import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { type ColumnDef, flexRender, getCoreRowModel, useReactTable, type VisibilityState } from '@tanstack/react-table';
import { type ReactNode, useId, useMemo, useState } from 'react';
import { api, type Batch, currentWorkspaceId, type Job, unwrap } from '../api/client';
import { listJobs } from '../api/jobs';
import { formatNumber, plural } from '../format';
import {
  defaultVisibility,
  forgetVisibility,
  isPlainObject,
  type Item,
  itemKindsOf,
  loadVisibility,
  resultColumns,
  saveVisibility,
  textOf,
  valueAt,
  visibilityKey,
} from './result-columns';
import { ErrorNotice, Loading } from './ui';

/** Page sizes offered; GET /v1/jobs/{job_id}/items takes at most 1,000 items a page. */
export const PAGE_SIZES = [25, 50, 100, 250, 500, 1000] as const;
const DEFAULT_PAGE_SIZE = 100;

/**
 * A page read: where it starts in the result, and the cursor that reads it (none for the first),
 * or, for a page reached without reading the ones before it (the last), its offset.
 */
interface PageAt {
  start: number;
  cursor: string | null;
  offset?: number;
}

/** Where the last page of `total` items starts, at `size` items a page. */
export function lastPageStart(total: number, size: number): number {
  return total <= 0 ? 0 : Math.floor((total - 1) / size) * size;
}

interface Row {
  /** Position in the whole result, from 1. */
  position: number;
  item: Item;
}

/** A text longer than this is cut, with the rest a click away. */
const LONG_TEXT = 140;
/** A list longer than this is folded. */
const LONG_LIST = 6;

function shortUrl(url: string): string {
  const bare = url.replace(/^https?:\/\/(www\.)?/, '');
  return bare.length > 40 ? `${bare.slice(0, 39)}…` : bare;
}

/** A readable rendering of a nested object: one "key: value" line per field. */
function KeyValues({ value }: { value: Record<string, unknown> }) {
  const entries = Object.entries(value);
  if (entries.length === 0) return null;
  return (
    <ul className="kv">
      {entries.map(([key, v]) => (
        <li key={key}>
          <span className="kv-key">{key}:</span> <Value value={v} />
        </li>
      ))}
    </ul>
  );
}

/** One cell: numbers with separators, yes/no, links, lists and objects as text (never JSON); long ones fold. */
export function Value({ value }: { value: unknown }): ReactNode {
  if (value === null || value === undefined || value === '') return <span className="muted">—</span>;
  if (typeof value === 'number' || typeof value === 'boolean') return textOf(value);
  if (typeof value === 'string') {
    if (/^https?:\/\/\S+$/.test(value))
      return (
        <a href={value} className="cell-link" title={value} target="_blank" rel="noopener noreferrer">
          {shortUrl(value)}
        </a>
      );
    if (value.length <= LONG_TEXT) return value;
    return (
      <details className="cell-more">
        <summary>{value.slice(0, LONG_TEXT - 40).trimEnd()}…</summary>
        {value}
      </details>
    );
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return <span className="muted">none</span>;
    if (value.every((v) => !isPlainObject(v) && !Array.isArray(v))) {
      const text = value.map(textOf).join(', ');
      if (value.length <= LONG_LIST && text.length <= LONG_TEXT) return text;
      return (
        <details className="cell-more">
          <summary>{plural(value.length, 'value', 'values')}</summary>
          {text}
        </details>
      );
    }
    return (
      <details className="cell-more">
        <summary>{plural(value.length, 'entry', 'entries')}</summary>
        <ol className="kv-list">
          {(value as unknown[]).map((v, i) => (
            <li key={i}>{isPlainObject(v) ? <KeyValues value={v} /> : <Value value={v} />}</li>
          ))}
        </ol>
      </details>
    );
  }
  if (isPlainObject(value)) return <KeyValues value={value} />;
  return textOf(value);
}

/** A class naming the column (`col-username`, `col-metrics-views`) for its width rules. */
const columnClass = (column: string) => `col-${column.replace(/[^a-z0-9_-]/gi, '-')}`;

function ColumnPicker({
  columns,
  visibility,
  onChange,
  onReset,
}: {
  columns: string[];
  visibility: Record<string, boolean>;
  onChange: (column: string, shown: boolean) => void;
  onReset: () => void;
}) {
  const shown = columns.filter((c) => visibility[c]).length;
  // The choices are drawn only while open (a closed <details> still lays its content out).
  const [open, setOpen] = useState(false);
  return (
    <details className="column-picker" data-testid="column-picker" open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>
        Columns ({shown} of {columns.length} shown)
      </summary>
      {open && (
        <>
          <fieldset>
            <legend className="visually-hidden">Columns shown, in the order of the csv export</legend>
            {columns.map((column) => (
              <label key={column} className="column-choice">
                <input type="checkbox" checked={Boolean(visibility[column])} onChange={(e) => onChange(column, e.target.checked)} />{' '}
                {column}
              </label>
            ))}
          </fieldset>
          <div className="actions">
            <button type="button" onClick={() => columns.forEach((c) => onChange(c, true))}>
              Show all
            </button>
            <button type="button" onClick={onReset}>
              Default columns
            </button>
          </div>
        </>
      )}
    </details>
  );
}

/**
 * A completed job's result, page by page through GET /v1/jobs/{job_id}/items (cursor paging:
 * the cursors of the pages read are kept, so "Previous" goes back without reading from the
 * start; "Last page" asks for the page at its offset, computed from the job's result_count, and
 * "Previous" from a page read by offset asks for the page before it the same way). Columns are the csv export's, in its order; a picker shows and hides them, remembered
 * per operation in this browser. The filter looks only within the page shown.
 */
export function ResultsBrowser({ job, label = 'Result items' }: { job: Job; label?: string }) {
  const filterId = useId();
  const sizeId = useId();
  const [pageSize, setPageSize] = useState<number>(DEFAULT_PAGE_SIZE);
  const [pages, setPages] = useState<PageAt[]>([{ start: 0, cursor: null }]);
  const [filter, setFilter] = useState('');
  const includePosts = job.include_posts ?? 0;
  const kinds = useMemo(() => itemKindsOf(job.platform, job.operation, includePosts), [job.platform, job.operation, includePosts]);
  const columns = useMemo(() => resultColumns(kinds), [kinds]);
  const defaults = useMemo(() => defaultVisibility(kinds, columns), [kinds, columns]);
  const storageKey = visibilityKey(job.platform, job.operation);
  const [visibility, setVisibility] = useState<Record<string, boolean>>(() => loadVisibility(storageKey, defaults));
  const ready = job.status === 'completed' && !job.result_expired;

  const here = pages[pages.length - 1];
  const items = useQuery({
    queryKey: [currentWorkspaceId(), 'job-items', job.id, pageSize, here.cursor, here.offset ?? null],
    enabled: ready,
    placeholderData: keepPreviousData,
    staleTime: Infinity,
    queryFn: () =>
      unwrap(
        api.GET('/v1/jobs/{job_id}/items', {
          params: {
            path: { job_id: job.id },
            query: { limit: pageSize, ...(here.cursor ? { cursor: here.cursor } : {}), ...(here.offset ? { offset: here.offset } : {}) },
          },
        }),
      ),
  });

  const setShown = (column: string, shown: boolean) =>
    setVisibility((old) => {
      const next = { ...old, [column]: shown };
      saveVisibility(storageKey, next);
      return next;
    });
  const resetColumns = () => {
    forgetVisibility(storageKey);
    setVisibility(defaults);
  };

  const rows: Row[] = useMemo(
    () => (items.isPlaceholderData ? [] : (items.data?.items ?? [])).map((item, i) => ({ position: here.start + i + 1, item: item })),
    [items.data, items.isPlaceholderData, here.start],
  );
  const visibleColumns = useMemo(() => columns.filter((c) => visibility[c]), [columns, visibility]);
  const needle = filter.trim().toLowerCase();
  const shownRows = useMemo(
    () =>
      needle
        ? rows.filter((row) =>
            visibleColumns.some((c) =>
              textOf(valueAt(row.item, c, columns))
                .toLowerCase()
                .includes(needle),
            ),
          )
        : rows,
    [rows, needle, visibleColumns, columns],
  );

  const columnDefs = useMemo<ColumnDef<Row, unknown>[]>(
    () => [
      { id: '#', header: '#', accessorFn: (row) => row.position, cell: (c) => formatNumber(c.row.original.position) },
      ...columns.map((column): ColumnDef<Row, unknown> => ({
        id: column,
        header: column,
        accessorFn: (row) => valueAt(row.item, column, columns),
        cell: (c) => <Value value={c.getValue()} />,
      })),
    ],
    [columns],
  );
  const columnVisibility: VisibilityState = visibility;
  const table = useReactTable({
    data: shownRows,
    columns: columnDefs,
    state: { columnVisibility },
    getCoreRowModel: getCoreRowModel(),
    getRowId: (row) => String(row.position),
  });

  if (job.status !== 'completed') return <p className="muted">The result appears here when the job has completed.</p>;
  if (job.result_expired) return <p className="muted">The result was deleted after the retention period; the job&apos;s record is kept.</p>;
  if (items.error) return <ErrorNotice error={items.error} />;
  if (!items.data) return <Loading label="Reading the result" />;

  const total = job.result_count ?? null;
  const loaded = items.isPlaceholderData ? 0 : items.data.items.length;
  const busy = items.isFetching;
  const nextCursor = items.isPlaceholderData ? null : items.data.next_cursor;
  if (loaded === 0 && pages.length === 1 && !busy)
    return (
      <p className="empty" data-testid="results-empty">
        The job delivered no items.
      </p>
    );
  const from = here.start + 1;
  const to = here.start + loaded;
  const range =
    busy && items.isPlaceholderData
      ? 'Reading the page…'
      : `Items ${formatNumber(from)}–${formatNumber(to)}${total !== null ? ` of ${formatNumber(total)}` : ''}`;

  // One page only: no pager.
  const onePage = pages.length === 1 && !nextCursor;
  const lastStart = total !== null ? lastPageStart(total, pageSize) : null;
  const onLast = lastStart !== null && here.start >= lastStart && !nextCursor;
  // From a page read by offset, the page before it is read by offset too (its cursor was never handed out).
  const previous = () => {
    if (here.offset === undefined) return setPages(pages.slice(0, -1));
    const start = here.start - pageSize;
    setPages(start <= 0 ? [pages[0]] : [...pages.slice(0, -1), { start, cursor: null, offset: start }]);
  };
  const pager = (where: string) =>
    onePage ? null : (
      <nav className="pager results-pager" aria-label={`Result pages (${where})`}>
        <button type="button" onClick={() => setPages([pages[0]])} disabled={pages.length === 1 || busy}>
          First page
        </button>
        <button type="button" onClick={previous} disabled={pages.length === 1 || busy}>
          ← Previous
        </button>
        <button
          type="button"
          onClick={() => nextCursor && setPages([...pages, { start: here.start + loaded, cursor: nextCursor }])}
          disabled={!nextCursor || busy}
        >
          Next →
        </button>
        <button
          type="button"
          onClick={() =>
            lastStart !== null && setPages(lastStart === 0 ? [pages[0]] : [pages[0], { start: lastStart, cursor: null, offset: lastStart }])
          }
          disabled={lastStart === null || onLast || busy}
        >
          Last page
        </button>
      </nav>
    );

  return (
    <div className="results" data-testid="results-browser">
      <div className="results-toolbar">
        <p className="results-range" aria-live="polite" data-testid="results-range">
          {range}
          {needle && !items.isPlaceholderData ? ` · ${formatNumber(shownRows.length)} of this page match` : ''}
        </p>
        <div className="results-controls">
          <label htmlFor={filterId}>
            Filter this page
            <input
              id={filterId}
              type="search"
              value={filter}
              onChange={(e) => setFilter(e.target.value)}
              placeholder="Text in the shown columns"
            />
          </label>
          <label htmlFor={sizeId}>
            Items per page
            <select
              id={sizeId}
              value={pageSize}
              onChange={(e) => {
                setPageSize(Number(e.target.value));
                setPages([{ start: 0, cursor: null }]);
              }}
            >
              {PAGE_SIZES.map((size) => (
                <option key={size} value={size}>
                  {formatNumber(size)}
                </option>
              ))}
            </select>
          </label>
        </div>
        <ColumnPicker columns={columns} visibility={visibility} onChange={setShown} onReset={resetColumns} />
      </div>
      {pager('top')}
      <div className="table-wrap results-wrap" tabIndex={0} role="region" aria-label={label} aria-busy={busy}>
        <table data-testid="results-table">
          <caption className="visually-hidden">{label}</caption>
          <thead>
            {table.getHeaderGroups().map((group) => (
              <tr key={group.id}>
                {group.headers.map((header) => (
                  <th key={header.id} scope="col" className={columnClass(header.column.id)}>
                    {flexRender(header.column.columnDef.header, header.getContext())}
                  </th>
                ))}
              </tr>
            ))}
          </thead>
          <tbody>
            {table.getRowModel().rows.map((row) => (
              <tr key={row.id}>
                {row.getVisibleCells().map((cell) => (
                  <td key={cell.id} className={columnClass(cell.column.id)}>
                    {flexRender(cell.column.columnDef.cell, cell.getContext())}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
        {needle && shownRows.length === 0 && loaded > 0 && <p className="empty">No item of this page matches “{filter.trim()}”.</p>}
      </div>
      {pager('bottom')}
    </div>
  );
}

/**
 * A batch's results, one completed child at a time: a picker of the completed children (in the
 * batch's target order, with their item counts; usable with 100 of them), then the chosen
 * child's results in the same browser as a job's.
 */
export function BatchResults({ batch }: { batch: Batch }) {
  const pickerId = useId();
  const [chosen, setChosen] = useState<string | null>(null);
  const children = useQuery({
    // Read again as children complete.
    queryKey: [currentWorkspaceId(), 'batch-results', batch.id, batch.completed_count],
    enabled: batch.completed_count > 0,
    placeholderData: keepPreviousData,
    queryFn: () => listJobs({ batch_id: batch.id, status: 'completed', include_result: false, limit: 100 }),
  });
  if (batch.completed_count === 0) return <p className="muted">The results appear here as the batch&apos;s jobs complete.</p>;
  if (children.error) return <ErrorNotice error={children.error} />;
  if (!children.data) return <Loading label="Reading the completed jobs" />;
  const order = new Map((batch.jobs ?? []).map((child, i) => [child.id, i]));
  const completed = [...children.data.items].sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
  const child = completed.find((c) => c.id === chosen) ?? completed[0];
  if (!child) return <p className="muted">No job of this batch has completed yet.</p>;
  return (
    <div data-testid="batch-results">
      <label htmlFor={pickerId}>
        Job of the batch{' '}
        <span className="muted small">
          ({formatNumber(completed.length)} of {formatNumber(batch.target_count)} completed)
        </span>
      </label>
      <select id={pickerId} className="child-picker" value={child.id} onChange={(e) => setChosen(e.target.value)}>
        {completed.map((c) => (
          <option key={c.id} value={c.id}>
            {c.target} · {plural(c.result_count ?? 0, 'item', 'items')}
          </option>
        ))}
      </select>
      <ResultsBrowser key={child.id} job={child} label={`Result items of ${child.target}`} />
    </div>
  );
}
