import type { Request } from 'express';
import type { CreateJobInput } from '@sdx/domain';
import type { ExtractionRequest } from '@sdx/contract';

/** The validated body of POST /v1/jobs and /v1/extract. */
export function jobInput(req: Request): CreateJobInput {
  const body = req.body as ExtractionRequest;
  return {
    platform: body.platform,
    operation: body.operation,
    target: body.target,
    limit: body.limit,
    include_posts: body.include_posts,
  };
}

export function skipCache(req: Request): boolean {
  return /(^|,)\s*no-cache\s*(,|$)/i.test(req.get('cache-control') ?? '');
}
