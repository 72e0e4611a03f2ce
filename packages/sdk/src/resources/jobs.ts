import { type Core, linkedPage, newIdempotencyKey, unwrap } from '../core';
import { ApiError } from '../errors';
import { follow, type WaitOptions } from '../follow';
import { List, queryOf } from '../paging';
import { readEvents, type ServerSentEvent } from '../sse';
import { type ExtractionRequest, type Item, type Job, type JobListFilters, TERMINAL_JOB_STATUSES } from '../types';

export interface CreateOptions {
  /** Your own Idempotency-Key; without one, a fresh key is made for the call and reused on each of its retries. */
  idempotencyKey?: string;
  /** Skip the result cache (`Cache-Control: no-cache`). */
  noCache?: boolean;
  signal?: AbortSignal;
}

export interface ExtractOptions extends CreateOptions, WaitOptions<Job> {}

export interface JobListParams extends JobListFilters {
  /** Jobs per page, 1 to 100 (default 25). */
  limit?: number;
}

export class Jobs {
  constructor(private readonly core: Core) {}

  /** `POST /v1/jobs`: accepts the job and answers at once (status `queued`, or a reused job). */
  async create(body: ExtractionRequest, options: CreateOptions = {}): Promise<Job> {
    const { data } = await unwrap(
      this.core.http.POST('/v1/jobs', { body, params: { header: createHeaders(options) }, signal: options.signal }),
    );
    return data;
  }

  /**
   * `POST /v1/extract`: the completed job. When the service's sync timeout passes first (202),
   * waits for the job like `wait`. A job that fails throws ApiError `extraction_failed` (status
   * 502), whether the service said so at once or the job failed while waited for.
   */
  async extract(body: ExtractionRequest, options: ExtractOptions = {}): Promise<Job> {
    const { data, response } = await unwrap(
      this.core.http.POST('/v1/extract', { body, params: { header: createHeaders(options) }, signal: options.signal }),
    );
    if (response.status !== 202) return data;
    const job = await this.wait(data.id, options);
    if (job.status === 'completed') return job;
    throw new ApiError(
      502,
      'extraction_failed',
      { error: 'extraction_failed', message: `job ${job.id} ended ${job.status}`, job_id: job.id, cause: job.error },
      response.headers.get('x-request-id'),
    );
  }

  /** `GET /v1/jobs/{job_id}`. */
  async get(id: string, options: { signal?: AbortSignal } = {}): Promise<Job> {
    const { data } = await unwrap(this.core.http.GET('/v1/jobs/{job_id}', { params: { path: { job_id: id } }, signal: options.signal }));
    return data;
  }

  /** `GET /v1/jobs`, newest first: `await` for the first page, `for await` for every job across pages, filters kept. */
  list(params: JobListParams = {}): List<Job> {
    return new List<Job>((query) => linkedPage(this.core.http.GET('/v1/jobs', { params: { query: query as never } })), queryOf(params));
  }

  /** `POST /v1/jobs/{job_id}/cancel`. */
  async cancel(id: string): Promise<Job> {
    const { data } = await unwrap(this.core.http.POST('/v1/jobs/{job_id}/cancel', { params: { path: { job_id: id } } }));
    return data;
  }

  /**
   * Waits until the job is completed, failed or cancelled and returns it (with its result).
   * Follows the live event stream, and polls when there is none. Aborting `signal` stops the
   * waiting only: the job keeps running on the service.
   */
  wait(id: string, options: WaitOptions<Job> = {}): Promise<Job> {
    return follow<Job>(
      {
        open: (signal) => this.openEvents(id, signal),
        get: (signal) => this.get(id, { signal }),
        isTerminal: (job) => TERMINAL_JOB_STATUSES.has(job.status),
        fingerprint: (job) => `${job.status}/${job.progress_stage}/${job.progress_current}/${job.progress_total}`,
      },
      options,
    );
  }

  /** `GET /v1/jobs/{job_id}/events`: the job's live events (the first is its current state). */
  async *events(id: string, options: { signal?: AbortSignal } = {}): AsyncGenerator<{ event: string; job: Job }> {
    for await (const event of readEvents(await this.openEvents(id, options.signal))) {
      if (event.data !== '') yield { event: event.event, job: parseState<Job>(event) };
    }
  }

  /** `GET /v1/jobs/{job_id}/items`: a completed job's result item by item, fetched page by page. */
  items(id: string, params: { limit?: number } = {}): List<Item> {
    return new List<Item>(async (query) => {
      const { data } = await unwrap(
        this.core.http.GET('/v1/jobs/{job_id}/items', { params: { path: { job_id: id }, query: query as never } }),
      );
      return { data: data.items, nextQuery: data.next_cursor ? { cursor: data.next_cursor } : null };
    }, queryOf(params));
  }

  private async openEvents(id: string, signal?: AbortSignal): Promise<ReadableStream<Uint8Array>> {
    const { data } = await unwrap(
      this.core.http.GET('/v1/jobs/{job_id}/events', {
        params: { path: { job_id: id } },
        parseAs: 'stream',
        headers: { Accept: 'text/event-stream' },
        signal,
      }),
    );
    return data as ReadableStream<Uint8Array>;
  }
}

export function createHeaders(options: CreateOptions): { 'Idempotency-Key': string; 'Cache-Control'?: string } {
  return {
    'Idempotency-Key': options.idempotencyKey ?? newIdempotencyKey(),
    ...(options.noCache ? { 'Cache-Control': 'no-cache' } : {}),
  };
}

export function parseState<T>(event: ServerSentEvent): T {
  return JSON.parse(event.data) as T;
}
