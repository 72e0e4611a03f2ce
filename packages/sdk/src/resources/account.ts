import { type Core, unwrap } from '../core';
import { List } from '../paging';
import { type OperationLimits, operationLimits } from '../limits';
import type { Account, DailyUsage, Platform, Quote, QuoteRequest, Usage } from '../types';

/** `GET /v1/platforms`: the catalog (no key needed). */
export class Platforms {
  constructor(private readonly core: Core) {}

  list(): List<Platform> {
    return new List<Platform>(async () => {
      const { data } = await unwrap(this.core.http.GET('/v1/platforms'));
      return { data, nextQuery: null };
    });
  }

  /**
   * `GET /v1/platforms`, then the default and the maximum `limit` of one operation (null when the
   * service has no such platform or operation); `operationLimits` reads them from a list you hold.
   */
  async limits(platform: string, operation: string): Promise<OperationLimits | null> {
    return operationLimits((await this.list()).data, platform, operation);
  }
}

export class AccountResource {
  constructor(private readonly core: Core) {}

  /** `GET /v1/account`: the workspace, its limits and the caller. */
  async get(): Promise<Account> {
    const { data } = await unwrap(this.core.http.GET('/v1/account'));
    return data;
  }
}

export class UsageResource {
  constructor(private readonly core: Core) {}

  /** `GET /v1/usage/current`: credits of the current period. */
  async current(): Promise<Usage> {
    const { data } = await unwrap(this.core.http.GET('/v1/usage/current'));
    return data;
  }

  /** `GET /v1/usage/daily`: one row per UTC day, oldest first (days 1 to 90, default 30). */
  async daily(params: { days?: number } = {}): Promise<DailyUsage[]> {
    const { data } = await unwrap(this.core.http.GET('/v1/usage/daily', { params: { query: params } }));
    return data;
  }
}

export class Quotes {
  constructor(private readonly core: Core) {}

  /** `POST /v1/quotes`: what a job (`target`) or batch (`targets`) would reserve now; nothing is reserved. */
  async create(body: QuoteRequest): Promise<Quote> {
    const { data } = await unwrap(this.core.http.POST('/v1/quotes', { body }));
    return data;
  }
}
