import { type Core, linkedPage, newIdempotencyKey, unwrap } from '../core';
import { follow, type WaitOptions } from '../follow';
import { List, queryOf } from '../paging';
import { readEvents } from '../sse';
import type { Batch, BatchRequest } from '../types';
import { parseState } from './jobs';

const TERMINAL_BATCH_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

export interface BatchListParams {
  /** Batches per page, 1 to 100 (default 25). */
  limit?: number;
  /** Include each batch's child summaries (`jobs`). */
  include_jobs?: boolean;
}

export class Batches {
  constructor(private readonly core: Core) {}

  /** `POST /v1/batches`: one queued child job per target, all or none. Retried safely with one Idempotency-Key. */
  async create(body: BatchRequest, options: { idempotencyKey?: string; signal?: AbortSignal } = {}): Promise<Batch> {
    const { data } = await unwrap(
      this.core.http.POST('/v1/batches', {
        body,
        params: { header: { 'Idempotency-Key': options.idempotencyKey ?? newIdempotencyKey() } },
        signal: options.signal,
      }),
    );
    return data;
  }

  /** `GET /v1/batches/{batch_id}`, with child summaries. */
  async get(id: string, options: { signal?: AbortSignal } = {}): Promise<Batch> {
    const { data } = await unwrap(
      this.core.http.GET('/v1/batches/{batch_id}', { params: { path: { batch_id: id } }, signal: options.signal }),
    );
    return data;
  }

  /** `GET /v1/batches`, newest first, across pages. */
  list(params: BatchListParams = {}): List<Batch> {
    return new List<Batch>(
      (query) => linkedPage(this.core.http.GET('/v1/batches', { params: { query: query as never } })),
      queryOf(params),
    );
  }

  /** `POST /v1/batches/{batch_id}/cancel`: cancels every child still queued or running. */
  async cancel(id: string): Promise<Batch> {
    const { data } = await unwrap(this.core.http.POST('/v1/batches/{batch_id}/cancel', { params: { path: { batch_id: id } } }));
    return data;
  }

  /** Waits until every child is terminal; returns the batch. Aborting `signal` stops the waiting, not the batch. */
  wait(id: string, options: WaitOptions<Batch> = {}): Promise<Batch> {
    return follow<Batch>(
      {
        open: (signal) => this.openEvents(id, signal),
        get: (signal) => this.get(id, { signal }),
        isTerminal: (batch) => TERMINAL_BATCH_STATUSES.has(batch.status),
        fingerprint: (b) =>
          `${b.status}/${b.queued_count}/${b.running_count}/${b.completed_count}/${b.failed_count}/${b.cancelled_count}/${b.result_count}`,
      },
      options,
    );
  }

  /** `GET /v1/batches/{batch_id}/events`: the batch's live events (the first is its current state). */
  async *events(id: string, options: { signal?: AbortSignal } = {}): AsyncGenerator<{ event: string; batch: Batch }> {
    for await (const event of readEvents(await this.openEvents(id, options.signal))) {
      if (event.data !== '') yield { event: event.event, batch: parseState<Batch>(event) };
    }
  }

  private async openEvents(id: string, signal?: AbortSignal): Promise<ReadableStream<Uint8Array>> {
    const { data } = await unwrap(
      this.core.http.GET('/v1/batches/{batch_id}/events', {
        params: { path: { batch_id: id } },
        parseAs: 'stream',
        headers: { Accept: 'text/event-stream' },
        signal,
      }),
    );
    return data as ReadableStream<Uint8Array>;
  }
}
