import type { Request, Response } from 'express';
import type { PageRequest } from '@sdx/domain/api';

/** The page a list request asks for: `limit` (bounded by openapi.yaml) and `starting_after`. */
export function pageRequestOf(req: Request, defaultLimit: number): PageRequest {
  const startingAfter = req.query.starting_after;
  return { limit: Number(req.query.limit ?? defaultLimit), startingAfter: typeof startingAfter === 'string' ? startingAfter : null };
}

/**
 * `Link: <…>; rel="next"` when another page follows: this request's path and query with
 * `starting_after` set to the last ID of this page. The reference is relative (RFC 8288 resolves
 * it against the request's URL), so it never depends on a Host header or a proxy's scheme.
 */
export function setNextLink(req: Request, res: Response, next: string | null): void {
  if (next === null) return;
  const url = new URL(req.originalUrl, 'http://link.invalid');
  url.searchParams.set('starting_after', next);
  res.setHeader('Link', `<${url.pathname}${url.search}>; rel="next"`);
}
