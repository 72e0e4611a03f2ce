import { type Core, linkedPage, unwrap } from '../core';
import { List, queryOf, type RawPage } from '../paging';
import type {
  Monitor,
  MonitorChange,
  MonitorChangeFilters,
  MonitorRequest,
  MonitorRun,
  MonitorSeries,
  MonitorSeriesFilters,
  MonitorUpdate,
} from '../types';
import { type DownloadResult, filenameOf, type NodeWritableLike, type OpenedExport, saveExport } from './exports';

export interface MonitorListParams {
  /** Monitors per page, 1 to 100 (default 50). */
  limit?: number;
}

export interface SeriesExportOptions extends MonitorSeriesFilters {
  /** csv, xlsx or json (default json): columns target, item_id, metric, at, value. */
  format?: 'csv' | 'xlsx' | 'json';
  signal?: AbortSignal;
}

/** A page of a `{data, has_more}` list: the next one starts after its last item. */
async function hasMorePage<T extends { id: string }>(
  pending: Promise<{ data?: { data: T[]; has_more: boolean }; error?: unknown; response: Response }>,
): Promise<RawPage<T>> {
  const { data } = await unwrap(pending);
  const last = data.data[data.data.length - 1];
  return { data: data.data, nextQuery: data.has_more && last ? { starting_after: last.id } : null };
}

/**
 * Monitors: one monitorable operation over targets on a recurrence, keeping what changed as
 * series, changes and alerts.
 *
 *     const m = await sdx.monitors.create({ platform: 'instagram', operation: 'profile', targets: ['natgeo'], frequency: 'daily' });
 *     const [followers] = await sdx.monitors.series(m.id, { metric: 'followers_count' });
 */
export class Monitors {
  constructor(private readonly core: Core) {}

  /** `POST /v1/monitors` (member). A non-monitorable operation is a 422 `operation_not_monitorable`. */
  async create(body: MonitorRequest): Promise<Monitor> {
    const { data } = await unwrap(this.core.http.POST('/v1/monitors', { body }));
    return data;
  }

  /** `GET /v1/monitors`, newest first, across pages. */
  list(params: MonitorListParams = {}): List<Monitor> {
    return new List<Monitor>(
      (query) => linkedPage(this.core.http.GET('/v1/monitors', { params: { query: query as never } })),
      queryOf(params),
    );
  }

  /** `GET /v1/monitors/{monitor_id}`. */
  async get(id: string): Promise<Monitor> {
    const { data } = await unwrap(this.core.http.GET('/v1/monitors/{monitor_id}', { params: { path: { monitor_id: id } } }));
    return data;
  }

  /** `PATCH /v1/monitors/{monitor_id}`: the fields given replace the stored ones (not platform or operation). */
  async update(id: string, body: MonitorUpdate): Promise<Monitor> {
    const { data } = await unwrap(this.core.http.PATCH('/v1/monitors/{monitor_id}', { params: { path: { monitor_id: id } }, body }));
    return data;
  }

  /** `DELETE /v1/monitors/{monitor_id}`. */
  async delete(id: string): Promise<void> {
    await unwrap(this.core.http.DELETE('/v1/monitors/{monitor_id}', { params: { path: { monitor_id: id } } }));
  }

  /** `POST /v1/monitors/{monitor_id}/pause`: no automatic run until resumed. */
  async pause(id: string): Promise<Monitor> {
    const { data } = await unwrap(this.core.http.POST('/v1/monitors/{monitor_id}/pause', { params: { path: { monitor_id: id } } }));
    return data;
  }

  /** `POST /v1/monitors/{monitor_id}/resume`. */
  async resume(id: string): Promise<Monitor> {
    const { data } = await unwrap(this.core.http.POST('/v1/monitors/{monitor_id}/resume', { params: { path: { monitor_id: id } } }));
    return data;
  }

  /** `POST /v1/monitors/{monitor_id}/run`: a run now (202); `skipped_credits` when the workspace cannot afford all of it. */
  async run(id: string): Promise<MonitorRun> {
    const { data } = await unwrap(this.core.http.POST('/v1/monitors/{monitor_id}/run', { params: { path: { monitor_id: id } } }));
    return data;
  }

  /** `GET /v1/monitors/{monitor_id}/runs`, newest first, across pages. */
  runs(id: string, params: { limit?: number } = {}): List<MonitorRun> {
    return new List<MonitorRun>(
      (query) =>
        hasMorePage(this.core.http.GET('/v1/monitors/{monitor_id}/runs', { params: { path: { monitor_id: id }, query: query as never } })),
      queryOf(params),
    );
  }

  /** `GET /v1/monitors/{monitor_id}/series`: each series with its points oldest first. */
  async series(id: string, filters: MonitorSeriesFilters = {}): Promise<MonitorSeries[]> {
    const { data } = await unwrap(
      this.core.http.GET('/v1/monitors/{monitor_id}/series', { params: { path: { monitor_id: id }, query: filters } }),
    );
    return data.data;
  }

  /** `GET /v1/monitors/{monitor_id}/series/export` as a stream of bytes (csv, xlsx or json). */
  async openSeriesExport(id: string, options: SeriesExportOptions = {}): Promise<OpenedExport> {
    const { signal, format = 'json', ...filters } = options;
    const { data, response } = await unwrap(
      this.core.http.GET('/v1/monitors/{monitor_id}/series/export', {
        params: { path: { monitor_id: id }, query: { format, ...filters } },
        parseAs: 'stream',
        signal,
      }),
    );
    return {
      body: data as unknown as ReadableStream<Uint8Array>,
      contentType: response.headers.get('content-type'),
      filename: filenameOf(response.headers.get('content-disposition')),
    };
  }

  /** The series export written to a file path (whole or not at all), a WritableStream, or a Node writable. */
  async exportSeries(
    id: string,
    to: string | WritableStream<Uint8Array> | NodeWritableLike,
    options: SeriesExportOptions = {},
  ): Promise<DownloadResult> {
    return saveExport(await this.openSeriesExport(id, options), to, options.signal);
  }

  /** `GET /v1/monitors/{monitor_id}/changes`, newest first, across pages. */
  changes(id: string, filters: MonitorChangeFilters & { limit?: number } = {}): List<MonitorChange> {
    return new List<MonitorChange>(
      (query) =>
        hasMorePage(
          this.core.http.GET('/v1/monitors/{monitor_id}/changes', { params: { path: { monitor_id: id }, query: query as never } }),
        ),
      queryOf(filters),
    );
  }
}
