import { type Core, unwrap } from '../core';
import { List } from '../paging';
import type { Destination, DestinationCreateRequest } from '../types';

/** The workspace's buckets, where a job's (a batch's) export is written when it ends: pass `destination_id` to `jobs.create`, `batches.create` or `schedules.create`. */
export class Destinations {
  constructor(private readonly core: Core) {}

  /** `POST /v1/destinations`: the service writes and deletes a check object first (422 `destination_unreachable` with the store's message); never answers the secret. */
  async create(body: DestinationCreateRequest): Promise<Destination> {
    const { data } = await unwrap(this.core.http.POST('/v1/destinations', { body }));
    return data;
  }

  /** `GET /v1/destinations`, newest first. */
  list(): List<Destination> {
    return new List<Destination>(async () => {
      const { data } = await unwrap(this.core.http.GET('/v1/destinations'));
      return { data, nextQuery: null };
    });
  }

  /** `GET /v1/destinations/{destination_id}`. */
  async get(id: string): Promise<Destination> {
    const { data } = await unwrap(this.core.http.GET('/v1/destinations/{destination_id}', { params: { path: { destination_id: id } } }));
    return data;
  }

  /** `DELETE /v1/destinations/{destination_id}`: deliveries still pending to it fail; objects already written stay. */
  async delete(id: string): Promise<void> {
    await unwrap(this.core.http.DELETE('/v1/destinations/{destination_id}', { params: { path: { destination_id: id } } }));
  }
}
