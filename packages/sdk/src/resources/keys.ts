import { type Core, startingAfterPage, unwrap } from '../core';
import { List, queryOf } from '../paging';
import type { ApiKey, ApiKeyCreateRequest, AuditEvent, CreatedApiKey } from '../types';

export class Keys {
  constructor(private readonly core: Core) {}

  /** `POST /v1/keys`: `api_key`, the secret, is in this answer only. */
  async create(body: ApiKeyCreateRequest): Promise<CreatedApiKey> {
    const { data } = await unwrap(this.core.http.POST('/v1/keys', { body }));
    return data;
  }

  /** `GET /v1/keys`: newest first, revoked ones included; never a secret. */
  list(): List<ApiKey> {
    return new List<ApiKey>(async () => {
      const { data } = await unwrap(this.core.http.GET('/v1/keys'));
      return { data, nextQuery: null };
    });
  }

  /** `DELETE /v1/keys/{key_id}`: the key fails on its next request. */
  async revoke(id: string): Promise<void> {
    await unwrap(this.core.http.DELETE('/v1/keys/{key_id}', { params: { path: { key_id: id } } }));
  }
}

export class AuditEvents {
  constructor(private readonly core: Core) {}

  /** `GET /v1/audit-events`, newest first, across pages (`starting_after`). */
  list(params: { limit?: number } = {}): List<AuditEvent> {
    const limit = params.limit ?? 50;
    return new List<AuditEvent>(
      (query) => startingAfterPage(this.core.http.GET('/v1/audit-events', { params: { query: query as never } }), limit),
      queryOf({ ...params, limit }),
    );
  }
}
