import type { Request, Response } from 'express';
import type { CreateJobInput, CreateJobOptions } from '@sdx/domain/api';
import type { ExtractionRequest } from '@sdx/contract';

/**
 * What POST /v1/jobs and /v1/extract ask of createJob: the validated body, and from the request
 * its Idempotency-Key, its Cache-Control and its X-Request-ID.
 */
export function jobRequest(
  req: Request,
  res: Response,
  body: ExtractionRequest,
  endpoint: string,
): { input: CreateJobInput; options: CreateJobOptions } {
  return {
    input: {
      platform: body.platform,
      operation: body.operation,
      target: body.target,
      limit: body.limit,
      include_posts: body.include_posts,
      destination_id: body.destination_id,
    },
    options: {
      endpoint,
      idempotencyKey: req.get('idempotency-key') ?? null,
      requestId: res.locals.requestId as string,
      skipCache: skipCache(req),
    },
  };
}

/** Cache-Control: no-cache. */
export function skipCache(req: Request): boolean {
  return /(^|,)\s*no-cache\s*(,|$)/i.test(req.get('cache-control') ?? '');
}
