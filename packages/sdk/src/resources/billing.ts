import { type Core, unwrap } from '../core';
import { List, queryOf } from '../paging';
import type { Billing as BillingView, BillingPortal, Checkout, Invoice, Subscription, SubscriptionRequest } from '../types';

/**
 * Billing (extensions-2.md 1, extensions-3.md 2): the workspace's billing and plans, subscribing
 * to a monthly plan, changing and cancelling it, Stripe's billing portal and the invoices.
 */
export class Billing {
  constructor(private readonly core: Core) {}

  /** `GET /v1/billing`: packs, plans, the plan and subscription, auto-recharge, limits; `payments_enabled`. */
  async get(): Promise<BillingView> {
    const { data } = await unwrap(this.core.http.GET('/v1/billing'));
    return data;
  }

  /**
   * `POST /v1/billing/subscription`. Without a live subscription: `{ checkout: {checkout_id, url} }`
   * (send the subscriber to `url`). With one: `{ subscription }`, changed to the plan (an upgrade
   * is invoiced at once; a downgrade waits for the next invoice, `scheduled_plan_id`).
   */
  async subscribe(
    body: SubscriptionRequest,
  ): Promise<{ checkout: Checkout; subscription?: undefined } | { subscription: Subscription; checkout?: undefined }> {
    const { data, response } = await unwrap(this.core.http.POST('/v1/billing/subscription', { body }));
    if (response.status === 201) return { checkout: data as Checkout };
    return { subscription: data as Subscription };
  }

  /** `DELETE /v1/billing/subscription`: ends at the end of the period (`cancel_at_period_end`). */
  async cancel(): Promise<Subscription> {
    const { data } = await unwrap(this.core.http.DELETE('/v1/billing/subscription'));
    return data as Subscription;
  }

  /** `POST /v1/billing/portal`: a Stripe billing portal session (`url`). */
  async portal(body: { return_url?: string } = {}): Promise<BillingPortal> {
    const { data } = await unwrap(this.core.http.POST('/v1/billing/portal', { body }));
    return data;
  }

  /** `GET /v1/billing/invoices`, newest first, across pages (`starting_after`). */
  invoices(params: { limit?: number } = {}): List<Invoice> {
    const limit = params.limit ?? 50;
    return new List<Invoice>(async (query) => {
      const { data } = await unwrap(this.core.http.GET('/v1/billing/invoices', { params: { query: query as never } }));
      const last = data.data[data.data.length - 1];
      return { data: data.data, nextQuery: data.has_more && last ? { ...query, starting_after: last.id } : null };
    }, queryOf({ limit }));
  }
}
