import { type Core, startingAfterPage, unwrap } from '../core';
import { List, queryOf } from '../paging';
import type {
  WebhookCreateRequest,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookEvent,
  WebhookUpdateRequest,
} from '../types';
import { type HeadersLike, signWebhook, verifyWebhook, type VerifyOptions } from '../webhook-signature';

export class Webhooks {
  constructor(private readonly core: Core) {}

  /** `POST /v1/webhooks`: `secret` is in this answer only. */
  async create(body: WebhookCreateRequest): Promise<WebhookEndpointWithSecret> {
    const { data } = await unwrap(this.core.http.POST('/v1/webhooks', { body }));
    return data;
  }

  /** `GET /v1/webhooks`. */
  list(): List<WebhookEndpoint> {
    return new List<WebhookEndpoint>(async () => {
      const { data } = await unwrap(this.core.http.GET('/v1/webhooks'));
      return { data, nextQuery: null };
    });
  }

  /** `GET /v1/webhooks/{webhook_id}`. */
  async get(id: string): Promise<WebhookEndpoint> {
    const { data } = await unwrap(this.core.http.GET('/v1/webhooks/{webhook_id}', { params: { path: { webhook_id: id } } }));
    return data;
  }

  /** `PATCH /v1/webhooks/{webhook_id}`. */
  async update(id: string, body: WebhookUpdateRequest): Promise<WebhookEndpoint> {
    const { data } = await unwrap(this.core.http.PATCH('/v1/webhooks/{webhook_id}', { params: { path: { webhook_id: id } }, body }));
    return data;
  }

  /** `DELETE /v1/webhooks/{webhook_id}`. */
  async delete(id: string): Promise<void> {
    await unwrap(this.core.http.DELETE('/v1/webhooks/{webhook_id}', { params: { path: { webhook_id: id } } }));
  }

  /** `POST /v1/webhooks/{webhook_id}/rotate-secret`: the new secret, shown once; the old one keeps signing beside it for 24 hours. */
  async rotateSecret(id: string): Promise<WebhookEndpointWithSecret> {
    const { data } = await unwrap(this.core.http.POST('/v1/webhooks/{webhook_id}/rotate-secret', { params: { path: { webhook_id: id } } }));
    return data;
  }

  /** `POST /v1/webhooks/{webhook_id}/test`: sends a `webhook.test` event; answers its delivery, pending. */
  async test(id: string): Promise<WebhookDelivery> {
    const { data } = await unwrap(this.core.http.POST('/v1/webhooks/{webhook_id}/test', { params: { path: { webhook_id: id } } }));
    return data;
  }

  /** `GET /v1/webhooks/{webhook_id}/deliveries`, newest first, across pages. */
  deliveries(id: string, params: { limit?: number } = {}): List<WebhookDelivery> {
    const limit = params.limit ?? 50;
    return new List<WebhookDelivery>(
      (query) =>
        startingAfterPage(
          this.core.http.GET('/v1/webhooks/{webhook_id}/deliveries', { params: { path: { webhook_id: id }, query: query as never } }),
          limit,
        ),
      queryOf({ ...params, limit }),
    );
  }

  /** `POST /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver`. */
  async redeliver(id: string, deliveryId: string): Promise<WebhookDelivery> {
    const { data } = await unwrap(
      this.core.http.POST('/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver', {
        params: { path: { webhook_id: id, delivery_id: deliveryId } },
      }),
    );
    return data;
  }

  /**
   * Checks a delivery you received (the raw body as sent, its headers, your endpoint's secret or
   * secrets) and returns its event; throws WebhookVerificationError otherwise. Standard Webhooks
   * scheme; timestamps more than 5 minutes away are refused as replays.
   */
  verify(body: string | Uint8Array, headers: HeadersLike, secret: string | string[], options?: VerifyOptions): Promise<WebhookEvent> {
    return verifyWebhook(body, headers, secret, options);
  }

  /** The headers that sign `body` with `secret`, as the service would (for forwarding and tests). */
  sign(body: string, secret: string, options: { id: string; timestamp?: number }) {
    return signWebhook(body, secret, options);
  }
}
