import { timingSafeEqual } from 'node:crypto';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { Router, type RequestHandler } from 'express';
import { ApiError } from '@sdx/domain/api';
import type { ExtractionQueues } from '@sdx/queue';

export const ADMIN_QUEUES_PATH = '/admin/queues';

const REALM = 'Basic realm="sdx admin", charset="UTF-8"';

/** The secret a request presents: `Authorization: Bearer <token>`, or Basic with the token as password. */
function presented(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const [scheme, value] = header.split(' ', 2);
  if (!value) return undefined;
  if (scheme?.toLowerCase() === 'bearer') return value.trim();
  if (scheme?.toLowerCase() === 'basic') {
    const decoded = Buffer.from(value.trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon >= 0 ? decoded.slice(colon + 1) : undefined;
  }
  return undefined;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Only holders of ADMIN_TOKEN pass: as a bearer token, or as the password of HTTP Basic (any
 * user name), which lets a browser open the board. Anything else is a JSON 401 that asks for
 * Basic credentials.
 */
export function requireAdminToken(token: string): RequestHandler {
  return (req, _res, next) => {
    const secret = presented(req.headers.authorization);
    if (secret !== undefined && same(secret, token)) {
      next();
      return;
    }
    const code = secret === undefined ? 'missing_authentication' : 'invalid_api_key';
    const message = secret === undefined ? 'This page needs the admin token.' : 'The admin token is not valid.';
    next(new ApiError(code, message, {}, { 'WWW-Authenticate': REALM }));
  };
}

/**
 * Bull Board over the extraction queues, read-only: Postgres owns each job's state, and the
 * reconciler re-adds whatever a removed entry should have woken, so the board is for looking.
 * Served at ADMIN_QUEUES_PATH behind requireAdminToken; not mounted at all without a token.
 */
export function adminQueues(token: string, queues: ExtractionQueues): Router {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(ADMIN_QUEUES_PATH);
  createBullBoard({
    queues: [queues.jobs, queues.batchChildren].map((queue) => new BullMQAdapter(queue, { readOnlyMode: true })),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'sdx queues' } },
  });
  const router = Router();
  router.use(ADMIN_QUEUES_PATH, requireAdminToken(token), serverAdapter.getRouter() as RequestHandler);
  return router;
}
